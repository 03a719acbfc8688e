package io.github.sparkkinesis.client

import java.net.{InetSocketAddress, URI, URLDecoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable
import scala.io.Source

import com.sun.net.httpserver.{HttpExchange, HttpServer}

/**
 * A local STS endpoint for one role whose trust policy demands `requiredExternalId` (None: demands none), speaking
 * STS's query protocol as the SDK does: AssumeRole answers fresh credentials (ASIASTUB1, ASIASTUB2, ...) expiring
 * `validFor` after the call, or 403 AccessDenied as AWS words it. No emulator here checks trust policies, so this stub
 * is how AccessDenied and external-id enforcement are tested. Every request's form fields are kept.
 */
final class StsStub(requiredExternalId: Option[String], validFor: java.time.Duration) extends AutoCloseable {
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  private val issued = new AtomicInteger()
  private val seen = mutable.Buffer.empty[(Map[String, String], Option[String])] // guarded by itself

  server.createContext(
    "/",
    (exchange: HttpExchange) => {
      val body = Source.fromInputStream(exchange.getRequestBody, UTF_8.name()).mkString
      val form = body.split('&').filter(_.contains('=')).map { kv =>
        val Array(k, v) = kv.split("=", 2)
        URLDecoder.decode(k, UTF_8.name()) -> URLDecoder.decode(v, UTF_8.name())
      }.toMap
      seen.synchronized(seen += (form -> Option(exchange.getRequestHeaders.getFirst("Authorization"))))
      val (status, xml) =
        if (form.get("ExternalId") == requiredExternalId) 200 -> granted(form)
        else 403 -> denied(form.getOrElse("RoleArn", "?"))
      val bytes = xml.getBytes(UTF_8)
      exchange.getResponseHeaders.add("Content-Type", "text/xml")
      exchange.sendResponseHeaders(status, bytes.length.toLong)
      exchange.getResponseBody.write(bytes)
      exchange.close()
    })
  server.start()

  def endpoint: URI = URI.create(s"http://127.0.0.1:${server.getAddress.getPort}")

  /** The form fields and Authorization header of every request, in order. */
  def requests: Seq[(Map[String, String], Option[String])] = seen.synchronized(seen.toVector)

  override def close(): Unit = server.stop(0)

  private def granted(form: Map[String, String]): String = {
    val n = issued.incrementAndGet()
    s"""<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
       |  <AssumeRoleResult>
       |    <Credentials>
       |      <AccessKeyId>ASIASTUB$n</AccessKeyId>
       |      <SecretAccessKey>stub-secret-$n</SecretAccessKey>
       |      <SessionToken>stub-token-$n</SessionToken>
       |      <Expiration>${Instant.now().plus(validFor)}</Expiration>
       |    </Credentials>
       |    <AssumedRoleUser>
       |      <AssumedRoleId>AROASTUB:${form.getOrElse("RoleSessionName", "")}</AssumedRoleId>
       |      <Arn>${form.getOrElse("RoleArn", "")}</Arn>
       |    </AssumedRoleUser>
       |  </AssumeRoleResult>
       |  <ResponseMetadata><RequestId>stub-$n</RequestId></ResponseMetadata>
       |</AssumeRoleResponse>""".stripMargin
  }

  private val BaseUser = "arn:aws:iam::111122223333:user/base"

  private def denied(roleArn: String): String =
    s"""<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
       |  <Error>
       |    <Type>Sender</Type>
       |    <Code>AccessDenied</Code>
       |    <Message>User: $BaseUser is not authorized to perform: sts:AssumeRole on resource: $roleArn</Message>
       |  </Error>
       |  <RequestId>stub-denied</RequestId>
       |</ErrorResponse>""".stripMargin
}
