package io.github.sparkkinesis.client

import java.lang.reflect.{InvocationTargetException, Method, Modifier}

import scala.util.control.NonFatal

import software.amazon.awssdk.auth.credentials.{
  AwsBasicCredentials,
  AwsCredentials => SdkCredentials,
  AwsCredentialsProvider,
  AwsSessionCredentials
}

/**
 * The user's credentials provider class of option `kinesis.credentialProviderClass`. The connector's AWS SDK is
 * relocated inside its JAR, so the user's class usually implements the AWS SDK for Java v2's `AwsCredentialsProvider`
 * of the application's own SDK: it is used through its public `resolveCredentials()`, whose result's `accessKeyId()`,
 * `secretAccessKey()` and (session credentials) `sessionToken()` are read. A class built against the connector's
 * relocated interface is used as it is.
 */
private[sparkkinesis] object UserCredentialsProvider {
  private val OptionName = "kinesis.credentialProviderClass"

  /** Fails, naming the option, unless the class is there with the constructor needed and provides credentials. */
  def check(settings: ProviderClassSettings): Unit = constructor(settings, providerClassOf(settings))

  /** A new instance of the class, as a provider of the connector's SDK; closing it closes the instance. */
  def load(settings: ProviderClassSettings): AwsCredentialsProvider = {
    val instance =
      try constructor(settings, providerClassOf(settings))()
      catch {
        case e: InvocationTargetException => throw problem(settings, s"its constructor failed: ${describe(e.getCause)}")
      }
    instance match {
      case own: AwsCredentialsProvider => own
      case other => new Reflective(settings.className, other)
    }
  }

  /**
   * The class named `className`, or why it cannot provide credentials (missing, of the wrong type, abstract): the check
   * of option kinesis.credentialProviderClass's value.
   */
  def loadClass(className: String): Either[String, Class[_]] = {
    val loader = Option(Thread.currentThread().getContextClassLoader).getOrElse(getClass.getClassLoader)
    val found =
      try Right(Class.forName(className, false, loader))
      catch {
        case _: ClassNotFoundException | _: NoClassDefFoundError | _: LinkageError =>
          Left("no such class is on the class path: add the JAR that holds it to the driver and the executors " +
            "(spark-submit --jars or --packages)")
      }
    found.flatMap { cls =>
      if (!classOf[AwsCredentialsProvider].isAssignableFrom(cls) && resolveMethod(cls).isEmpty) {
        Left("it does not implement AwsCredentialsProvider of the AWS SDK for Java v2 (a public " +
          "resolveCredentials() method returning credentials with accessKeyId() and secretAccessKey())")
      } else if (Modifier.isAbstract(cls.getModifiers)) Left("it is abstract or an interface")
      else Right(cls)
    }
  }

  private def providerClassOf(settings: ProviderClassSettings): Class[_] =
    loadClass(settings.className).fold(why => throw problem(settings, why), identity)

  /** How to build an instance: the (String) constructor with the parameter, else the no-argument one. */
  private def constructor(settings: ProviderClassSettings, cls: Class[_]): () => AnyRef = settings.param match {
    case Some(param) =>
      val ctor =
        try cls.getConstructor(classOf[String])
        catch {
          case _: NoSuchMethodException => throw problem(
              settings,
              "kinesis.credentialProviderParam is set but the class has no public constructor taking one String")
        }
      () => ctor.newInstance(param).asInstanceOf[AnyRef]
    case None =>
      val ctor =
        try cls.getConstructor()
        catch {
          case _: NoSuchMethodException => throw problem(
              settings,
              "it has no public no-argument constructor (set kinesis.credentialProviderParam for one taking a String)")
        }
      () => ctor.newInstance().asInstanceOf[AnyRef]
  }

  private def resolveMethod(cls: Class[_]): Option[Method] =
    try {
      val method = cls.getMethod("resolveCredentials")
      val result = method.getReturnType
      result.getMethod("accessKeyId")
      result.getMethod("secretAccessKey")
      Some(method)
    } catch {
      case _: NoSuchMethodException => None
    }

  private def problem(settings: ProviderClassSettings, why: String): IllegalArgumentException =
    new IllegalArgumentException(s"Option $OptionName names class ${settings.className}, which cannot provide " +
      s"credentials: $why.")

  private def describe(t: Throwable): String = s"${t.getClass.getName}: ${t.getMessage}"

  /** A provider of the application's SDK, adapted to the connector's. */
  private final class Reflective(className: String, instance: AnyRef) extends AwsCredentialsProvider
      with AutoCloseable {
    private val resolve = resolveMethod(instance.getClass).get // providerClassOf checked it

    override def resolveCredentials(): SdkCredentials = {
      val credentials =
        try resolve.invoke(instance)
        catch {
          case e: InvocationTargetException => throw new CredentialsUnavailable(
              s"The credentials provider $className (option $OptionName) failed: ${describe(e.getCause)}")
        }
      def read(name: String): Option[String] =
        try Option(credentials.getClass.getMethod(name).invoke(credentials)).map(_.toString)
        catch {
          case _: NoSuchMethodException => None
        }
      (read("accessKeyId"), read("secretAccessKey"), read("sessionToken")) match {
        case (Some(key), Some(secret), Some(token)) => AwsSessionCredentials.create(key, secret, token)
        case (Some(key), Some(secret), None) => AwsBasicCredentials.create(key, secret)
        case _ => throw new CredentialsUnavailable(
            s"The credentials provider $className (option $OptionName) returned credentials without an access key id " +
              "or secret key.")
      }
    }

    override def close(): Unit = instance match {
      case closeable: AutoCloseable =>
        try closeable.close()
        catch {
          case NonFatal(_) => // the user's provider failing to close must not fail the client's close
        }
      case _ =>
    }
  }
}

/**
 * Credentials could not be had; the message says from where and what to do, and holds no secret. A provider throws it
 * from `resolveCredentials`, inside an SDK call: [[SdkErrors]] finds it among the causes and reports it as it is.
 */
final class CredentialsUnavailable(message: String) extends RuntimeException(message)
