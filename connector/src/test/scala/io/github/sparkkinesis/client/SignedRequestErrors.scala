package io.github.sparkkinesis.client

/**
 * Error texts as AWS words its signature errors: the canonical request and the string to sign quoted, session token
 * header included. The token is a role's (no option holds it), so only the text's shape can tell it is secret.
 */
object SignedRequestErrors {
  val Token: String = "IQoJb3JpZ2luX2VjEROLETOKEN" + ("Ab1+/" * 40) + "=="
  val Signature: String = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
  val AccessKeyId: String = "ASIAROLEKEYEXAMPLE"

  /** The message of an InvalidSignatureException (HTTP 400) for a request signed with the role's token. */
  val Mismatch: String =
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access " +
      "Key and signing method. Consult the service documentation for details.\n\nThe Canonical String for this " +
      s"request should have been\n'POST\n/\n\ncontent-type:application/x-amz-json-1.1\nhost:kinesis.us-east-1." +
      s"amazonaws.com\nx-amz-date:20261125T103000Z\nx-amz-security-token:$Token\n\ncontent-type;host;x-amz-date;" +
      s"x-amz-security-token\ne3b0c44298fc1c149afbf4c8996fb924'\n\nThe String-to-Sign should have been\n" +
      "'AWS4-HMAC-SHA256\n20261125T103000Z\n20261125/us-east-1/kinesis/aws4_request\n9f86d081884c7d65'"

  /** A message that quotes the request's headers, as some 400 errors' messages and the KPL's logs do. */
  val Headers: String =
    s"Authorization: AWS4-HMAC-SHA256 Credential=$AccessKeyId/20261125/us-east-1/kinesis/aws4_request, " +
      s"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=$Signature\nX-Amz-Security-Token: $Token"

  /** Every text of `t` and its causes, as logs and Spark's UI would show them. */
  def allText(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(20)
      .map(e => s"${e.toString} ${e.getMessage} ${e.getStackTrace.mkString(" ")}").mkString("\n")

  /** Whether `text` shows no part of the signed request. */
  def clean(text: String): Boolean =
    !text.contains(Token) && !text.contains(Signature) && !text.contains(AccessKeyId) && !text.contains("IQoJb3Jp")
}
