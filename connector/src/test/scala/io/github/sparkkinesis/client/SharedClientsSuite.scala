package io.github.sparkkinesis.client

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.net.URI

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class SharedClientsSuite extends AnyFunSuite with Matchers {

  test("SharedClients travels to executors without the clients it holds, and resolves to the JVM's own") {
    // Given a JVM that already holds a client, as the driver does once it has probed a stream
    val settings = ClientSettings(
      Some("us-east-1"),
      Some(URI.create("http://127.0.0.1:1")),
      Some(AwsCredentials("AKIDEXAMPLE", "secret", None)),
      RetrySettings(0, 100, 100))
    val client = SharedClients(settings)

    // When it is serialized with a task (Java serialization, as Spark's closure serializer does) and read back
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(SharedClients)
    out.close()
    val back = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()

    // Then it is this JVM's SharedClients, which still hands out the same client
    back should be theSameInstanceAs SharedClients
    SharedClients(settings) should be theSameInstanceAs client
  }

  test("Given two sessions' options with different static credentials, then SharedClients gives each its own client") {
    // Given the settings two Spark Connect sessions on one server derive from their options: same stream endpoint and
    // region, different access keys (different AWS accounts, or users)
    def of(keyId: String, secret: String) = ClientSettings(
      Some("us-east-1"),
      Some(URI.create("http://127.0.0.1:1")),
      Some(AwsCredentials(keyId, secret, None)),
      RetrySettings(0, 100, 100))
    val first = of("111111111111", "first-secret")
    // When each asks SharedClients for its client, and a third session repeats the first one's options
    val clients =
      Seq(first, of("222222222222", "second-secret"), of("111111111111", "another-secret")).map(SharedClients)
    // Then the clients are keyed on the whole settings, credentials included: no session gets another's client (a
    // secret differing alone counts), while equal settings share one
    clients.distinct should have size 3
    SharedClients(of("111111111111", "first-secret")) should be theSameInstanceAs clients.head
  }
}
