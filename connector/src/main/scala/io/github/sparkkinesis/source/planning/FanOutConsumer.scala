package io.github.sparkkinesis.source.planning

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.github.sparkkinesis.client.{
  AccessException,
  Backoff,
  ConsumerDescription,
  ConsumerTags,
  FanOutClient,
  KinesisClientException,
  ResourceMissingException,
  StreamRef,
  ThrottledException,
  UnreachableException
}
import io.github.sparkkinesis.options.{FanOutOptions, KinesisOptionsRegistry}
import io.github.sparkkinesis.source.reading.FanOutReaderSettings

/**
 * The stream consumer a query reads through, on the driver. With `kinesis.consumerArn` it only checks that the consumer
 * exists and waits until it is ACTIVE, and never registers or deregisters it. With `kinesis.consumerName` it reuses the
 * consumer of that name or registers it, and waits until it is ACTIVE, retrying throttled calls
 * (RegisterStreamConsumer: 5 per second per account) with jittered back-off for at most `waitMs`.
 *
 * Ownership: a consumer this query registers is recorded in its checkpoint (`checkpoint`), in a file of the stream's
 * own ([[ConsumerRecords]]: two streams of one name in two accounts or regions have two). On stop, with
 * `kinesis.deregisterConsumerOnStop`, only a consumer so recorded is deregistered; one that existed before the query
 * registered anything belongs to someone else (another query, or an administrator) and is never touched. A query
 * restarted under another `kinesis.consumerName` reads through that consumer from the same offsets; the one it
 * registered under the old name is left registered (another query may read through it by now), with a warning. A
 * consumer it registers carries tags naming that checkpoint ([[ConsumerTags]]), besides option kinesis.consumerTags'. A
 * consumer the connector registered for another checkpoint that this query reuses by name is recorded in a file of its
 * own (never deregistered by this query) and its tags then name this checkpoint.
 */
private[sparkkinesis] final class FanOutConsumer(
    client: FanOutClient,
    stream: String,
    options: FanOutOptions,
    checkpoint: Path,
    hadoopConf: Configuration,
    waitMs: Long,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) {

  private val log = LoggerFactory.getLogger(getClass)
  private val records = new ConsumerRecords(checkpoint, stream, hadoopConf)
  @volatile private var resolved: Option[ConsumerDescription] = None
  @volatile private var resolving: Option[Thread] = None

  /** Why resolving the consumer in the background failed: the query fails with it (a restart tries again). */
  @volatile private var failure: Option[Throwable] = None
  @volatile private var stopping = false

  /**
   * The consumer this query registered and the tags its registration asked for, checked once it is ACTIVE by the thread
   * that resolved it, after the ARN is out ([[checkRegistrationTags]]).
   */
  private var registrationTags: Option[(String, Map[String, String])] = None

  /** The ARN of the ACTIVE consumer, registering it first if this query manages it and it is absent. */
  def arn: String = {
    val consumer = resolve()
    if (resolving.forall(_ eq Thread.currentThread())) checkRegistrationTags() // else the resolving thread does
    consumer.arn
  }

  private def resolve(): ConsumerDescription = synchronized {
    failure.foreach(e => throw e)
    resolved.getOrElse {
      val consumer = options.consumerArn match {
        case Some(arn) =>
          requireConsumerOfStream(arn)
          awaitActive(s"consumer $arn (option kinesis.consumerArn)")(client.describeConsumerByArn(arn))
            .getOrElse(throw new KinesisClientException(s"The stream consumer $arn named by option " +
              s"kinesis.consumerArn " +
              s"does not exist: register it (aws kinesis register-stream-consumer), or set option " +
              s"kinesis.consumerName " +
              "for a consumer the query registers itself."))
        case None => managed(options.consumerName.get)
      }
      resolved = Some(consumer)
      consumer
    }
  }

  /**
   * Checks the tags of the consumer this query registered, once, outside the lock: a batch waiting for the ARN does not
   * wait for them (two calls on kinesis-mock, which drops a registration's tags; one on AWS, which keeps them).
   */
  private def checkRegistrationTags(): Unit = {
    val toCheck = synchronized {
      val taken = registrationTags
      registrationTags = None
      taken
    }
    toCheck.foreach { case (consumerArn, tags) => ensureTagged(consumerArn, tags) }
  }

  /**
   * Starts resolving (and if need be registering) the consumer on a thread of its own, so that waiting for it to become
   * ACTIVE overlaps the query's start-up and first look. A failure there is kept: [[checkResolution]] and [[arn]] raise
   * it.
   */
  def resolveInBackground(): Unit = {
    val thread = new Thread(
      new Runnable {
        override def run(): Unit =
          try arn
          catch {
            case NonFatal(e) if !stopping =>
              failure = Some(e)
              log.warn(s"Could not resolve the stream consumer of stream $stream: ${e.getMessage}")
            case NonFatal(_) => () // the query stopped meanwhile
          }
      },
      s"spark-kinesis-consumer-$stream")
    thread.setDaemon(true)
    resolving = Some(thread)
    thread.start()
  }

  /** What tasks need to read through this consumer. */
  def readerSettings: FanOutReaderSettings = FanOutReaderSettings(arn, options.subscribeTimeoutMs, options.maxRetries)

  /** Fails the query, on the driver's next planning, if resolving the consumer in the background failed. */
  def checkResolution(): Unit = failure.foreach(e => throw e)

  /**
   * On the query's stop: deregisters the consumer if this query registered it and the options allow, including one it
   * registered that was not ACTIVE yet. A resolution under way stops at its next wait.
   */
  def stop(): Unit = {
    stopping = true
    resolving.foreach(_.join(StopWaitMs))
    if (resolving.exists(_.isAlive)) {
      log.warn(s"The stream consumer of stream $stream was still being resolved $StopWaitMs ms after the query " +
        s"stopped (a Kinesis call that does not answer); if this query registered it, it stays registered: " +
        s"deregister it (aws kinesis deregister-stream-consumer) unless a later run of the query reads through it.")
    } else deregisterIfOwned()
  }

  private def deregisterIfOwned(): Unit = synchronized {
    if (options.consumerName.isDefined && options.deregisterOnStop) {
      val owned = records.registered().flatMap(arn => resolved.filter(_.arn == arn).orElse(describedQuietly(arn)))
        .filter(c => options.consumerName.contains(c.name) && c.status != "DELETING")
      owned.foreach { consumer =>
        log.info(s"Deregistering stream consumer ${consumer.arn}, which this query registered " +
          "(set kinesis.deregisterConsumerOnStop=false to keep it).")
        try client.deregisterConsumer(consumer.arn)
        catch {
          case e: KinesisClientException =>
            log.warn(s"Could not deregister stream consumer ${consumer.arn}: ${e.getMessage}")
        }
        records.forgetRegistration(consumer.arn)
        resolved = None
      }
    }
  }

  /** The consumer an earlier run (or this one) registered, if it still exists; None too if describing it fails. */
  private def describedQuietly(consumerArn: String): Option[ConsumerDescription] =
    try client.describeConsumerByArn(consumerArn)
    catch {
      case e: KinesisClientException =>
        log.info(
          s"Could not describe stream consumer $consumerArn, which this query registered before: ${e.getMessage}")
        None
    }

  private def managed(name: String): ConsumerDescription = {
    val ownRecord = records.owned
    val recorded = records.registered(ownRecord)
    val streamArn = retryingThrottled(s"describing stream $stream")(client.streamArn(stream))
    // One being deleted (say by this query's previous run, just stopped) must be gone before it can be registered.
    val since = clock()
    var existing = retryingThrottled(s"describing consumer $name")(client.describeConsumer(streamArn, name))
    while (existing.exists(_.status == "DELETING") && clock() - since <= waitMs) {
      pause(MinPollMs)
      existing = retryingThrottled(s"describing consumer $name")(client.describeConsumer(streamArn, name))
    }
    // A consumer registered now is CREATING from the registration on: the wait for it to become ACTIVE starts there,
    // so that writing the owner file takes place during the wait, not before it.
    val (waitingSince, registeredNow) = if (existing.forall(_.status == "DELETING")) {
      failIfStopping() // a query stopping already registers nothing more
      val registeringSince = clock()
      val registered =
        try Some(register(streamArn, name))
        catch {
          case e: KinesisClientException =>
            client.describeConsumer(streamArn, name) match {
              case Some(c) if registeredByThisQuery(c, registeringSince) =>
                log.info(s"Consumer $name of stream $stream was registered by this query, though its registration " +
                  s"failed (${e.getMessage}): a retried call whose first attempt took effect.")
                Some(c -> (options.tags ++ ConsumerTags.ofCheckpoint(records.checkpointLocation)))
              case Some(_) => // registered meanwhile by someone else: theirs, to reuse and never to deregister
                log.info(s"Consumer $name of stream $stream was registered meanwhile by someone else: ${e.getMessage}")
                None
              case None => throw e
            }
        }
      registered.foreach { case (consumer, _) =>
        records.recordRegistration(consumer.arn, replacing = ownRecord.isDefined)
        log.info(s"Registered stream consumer ${consumer.arn} for stream $stream (option kinesis.consumerName).")
      }
      registrationTags = registered.map { case (consumer, tags) => consumer.arn -> tags }
      (registeringSince, registered.map(_._1))
    } else (clock(), None)
    existing.filter(_.status != "DELETING").foreach(c => adoptIfConnectors(c.arn))
    def disappeared = new KinesisClientException(s"The stream consumer $name of stream $stream disappeared while " +
      "the query waited for it to become ACTIVE: another application deregistered it.")
    val what = s"consumer $name of stream $stream (option kinesis.consumerName)"
    val consumer = awaitActive(what, waitingSince, registeredNow)(client.describeConsumer(streamArn, name))
      .getOrElse(throw disappeared)
    recorded.filter(_ != consumer.arn).foreach(warnIfLeftBehind(_, name))
    consumer
  }

  /**
   * Fails unless the stream `consumerArn` belongs to (its ARN holds the stream's) is the stream the query reads, as
   * DescribeStreamSummary gives its ARN: the options' check at load() compares names, and accounts and regions only
   * where the options give them, so a consumer of another account's stream of the same name passes it when the query
   * names its stream by name alone. Such a consumer would serve that stream's records under this stream's name.
   */
  private def requireConsumerOfStream(consumerArn: String): Unit = {
    val readArn = retryingThrottled(s"describing stream $stream")(client.streamArn(stream))
    val ownerArn = StreamRef.arnOf(consumerArn).map(_.arn)
    if (!ownerArn.contains(readArn)) {
      throw new IllegalArgumentException(FanOutOptions.otherStreamsConsumer(
        consumerArn,
        ownerArn.getOrElse("(none named)"),
        s"$readArn (given as '$stream')",
        StreamRef.nameOf(stream),
        readArn))
    }
  }

  /**
   * Whether consumer `c`, found after this query's RegisterStreamConsumer failed (ResourceInUse after the SDK retried a
   * call whose first attempt took effect, its answer lost), is the one that call registered: its tags name this
   * checkpoint, or, where they name none (kinesis-mock drops them), it was created after the call began (less
   * [[FanOutConsumer.RegistrationClockSkewMs]] for the service's clock; none existed when the query looked just
   * before): otherwise the query would never record it and never deregister it, leaving it to cost money.
   */
  private def registeredByThisQuery(c: ConsumerDescription, registeringSince: Long): Boolean = {
    val tags =
      try client.consumerTags(c.arn)
      catch { case _: KinesisClientException => Map.empty[String, String] } // then its creation time decides
    ConsumerTags.checkpointOf(tags).fold(
      c.createdAtMillis >= registeringSince - FanOutConsumer.RegistrationClockSkewMs)(
      _ == records.checkpointLocation)
  }

  /**
   * Registers consumer `name` with the user's tags (option kinesis.consumerTags) and the connector's own, which name
   * this query's checkpoint; returns it with the tags it was registered with. Tags need kinesis:TagResource besides
   * kinesis:RegisterStreamConsumer: without the user's tags, a role refused that registers the consumer untagged.
   */
  private def register(streamArn: String, name: String): (ConsumerDescription, Map[String, String]) = {
    val tags = options.tags ++ ConsumerTags.ofCheckpoint(records.checkpointLocation)
    def attempt(tags: Map[String, String]) =
      retryingThrottled(s"registering $name", passing = false)(client.registerConsumer(streamArn, name, tags)) -> tags
    try attempt(tags)
    catch {
      case e: AccessException if options.tags.isEmpty =>
        log.warn(s"Registering stream consumer $name of stream $stream with the connector's tags was refused " +
          s"(${e.getMessage}); registering it untagged, so 'python -m pyspark_kinesis consumers' cannot tell which " +
          "query holds it. Allow kinesis:TagResource on the stream's consumers to have them tagged.")
        attempt(Map.empty)
      case e: AccessException =>
        throw new AccessException(
          s"Registering stream consumer $name of stream $stream with tags (option " +
            s"${KinesisOptionsRegistry.ConsumerTagsOption.name}) was refused: tagging needs the kinesis:TagResource " +
            "permission besides kinesis:RegisterStreamConsumer. Allow it, or remove the option. " + e.getMessage,
          e)
    }
  }

  /**
   * Adds the tags a registration asked for that the consumer lacks: AWS keeps them, but kinesis-mock (and so
   * LocalStack) accepts RegisterStreamConsumer's tags and drops them. Only a warning is at stake, and nothing but
   * throttling is retried: the query reads all the same. `present`: the consumer's tags, where just read.
   */
  private def ensureTagged(
      consumerArn: String,
      tags: Map[String, String],
      present: Option[Map[String, String]] = None): Unit = if (tags.nonEmpty) {
    try {
      val tagged = present.getOrElse(
        retryingThrottled(s"reading the tags of $consumerArn", passing = false)(client.consumerTags(consumerArn)))
      val missing = tags.filter { case (k, v) => !tagged.get(k).contains(v) }
      if (missing.nonEmpty) {
        retryingThrottled(s"tagging $consumerArn", passing = false)(client.tagConsumer(consumerArn, missing))
      }
    } catch {
      case e: KinesisClientException =>
        log.warn(s"Could not check or add the tags of stream consumer $consumerArn (${tags.keys.mkString(", ")}): " +
          e.getMessage)
    }
  }

  /**
   * Records that this query reads through `consumerArn`, which it did not register: a consumer the connector registered
   * for another checkpoint (a query since removed, or this query's before its checkpoint was replaced) gets this
   * checkpoint in its tags and a reader file here ([[ConsumerRecords.recordReader]]), so the consumers tool finds it
   * held rather than pruning it under this query. One query reads through a consumer at a time (a second subscription
   * to a shard ends the first), so the tags name the latest. An administrator's consumer (no connector tags) is left
   * untagged. Only a warning is at stake.
   */
  private def adoptIfConnectors(consumerArn: String): Unit =
    if (!records.owned.contains(consumerArn)) {
      try {
        val tags =
          retryingThrottled(s"reading the tags of $consumerArn", passing = false)(client.consumerTags(consumerArn))
        if (ConsumerTags.registeredByConnector(tags)) {
          records.recordReader(consumerArn)
          ensureTagged(consumerArn, ConsumerTags.replacingCheckpoint(records.checkpointLocation), Some(tags))
        }
      } catch {
        case e: KinesisClientException =>
          log.warn(s"Could not read the tags of stream consumer $consumerArn, which this query reuses (option " +
            s"kinesis.consumerName), to record this query as its reader: ${e.getMessage}")
      }
    }

  /** Warns about a consumer an earlier run registered under another name: still registered, no longer read. */
  private def warnIfLeftBehind(earlierArn: String, name: String): Unit =
    describedQuietly(earlierArn).filter(c => c.status != "DELETING" && c.name != name) // only a warning is at stake
      .foreach { earlier =>
        log.warn(s"This query registered stream consumer ${earlier.arn} ('${earlier.name}') in an earlier run and " +
          s"now reads through '$name' (option kinesis.consumerName), from the same offsets. '${earlier.name}' stays " +
          "registered, since another query may read through it by now, and costs money while it exists: " +
          s"deregister it (aws kinesis deregister-stream-consumer --consumer-arn ${earlier.arn}) if nothing reads " +
          "through it.")
      }

  /**
   * Describes until ACTIVE (or gone), for at most `waitMs` from `since`. `registered`: the consumer as this query's
   * registration at `since` just answered (CREATING), taken as the first look instead of a describe. Each next look is
   * the first that [[FanOutConsumer.activationLookAfterMs]] schedules after the last one began, made at once if other
   * work (writing the owner file) or a slow call ran past it.
   */
  private def awaitActive(what: String, since: Long = clock(), registered: Option[ConsumerDescription] = None)(
      describe: => Option[ConsumerDescription]): Option[ConsumerDescription] = {
    var lookedAt = 0L // ms after `since`
    def look(): Option[ConsumerDescription] = {
      lookedAt = clock() - since
      retryingThrottled(s"describing $what")(describe)
    }
    var current = registered.orElse(look())
    var looks = 0
    while (current.exists(!_.isActive)) {
      if (clock() - since > waitMs) {
        throw new KinesisClientException(
          s"The stream $what has been ${current.get.status} for ${clock() - since} ms, " +
            "not ACTIVE (option kinesis.driverRetryTimeout bounds the wait).")
      }
      looks = Iterator.from(looks + 1).find(n => FanOutConsumer.activationLookAfterMs(n) > lookedAt).get
      pause(math.max(0L, since + FanOutConsumer.activationLookAfterMs(looks) - clock()))
      current = look()
    }
    if (looks > 0) {
      log.info(s"The stream $what is ACTIVE, ${clock() - since} ms after the wait began (with the registration, if " +
        s"this query registered it; $looks looks).")
    }
    current
  }

  /**
   * Runs `body` again, with back-off, for at most `waitMs`, while it is throttled or, with `passing`, fails in a way
   * that may pass (a connection reset or timeout, a server error), as the driver's listing does: refused credentials, a
   * missing resource and an endpoint that cannot be reached fail at once. A registration is not retried on those: its
   * failure is looked into by its caller.
   */
  private def retryingThrottled[T](what: String, passing: Boolean = true)(body: => T): T = {
    val since = clock()
    val throttledBackoff = new Backoff(MinPollMs, MaxPollMs)
    while (true) {
      try return body
      catch {
        case e: ThrottledException if clock() - since < waitMs =>
          log.info(s"Throttled while $what: ${e.getMessage}")
          pause(throttledBackoff.nextDelayMs())
        case e: KinesisClientException if passing && mayPass(e) && clock() - since < waitMs =>
          log.warn(s"Failed while $what; trying again: ${e.getMessage}")
          pause(throttledBackoff.nextDelayMs())
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def mayPass(e: KinesisClientException): Boolean = e match {
    case _: AccessException | _: ResourceMissingException | _: UnreachableException => false
    case _ => true
  }

  /** A wait between Kinesis calls, which ends the resolution instead once the query is stopping. */
  private def pause(ms: Long): Unit = {
    failIfStopping()
    sleep(ms)
  }

  private def failIfStopping(): Unit = if (stopping) {
    throw new KinesisClientException(s"The query stopped while it resolved the stream consumer of stream $stream.")
  }

  /** Between looks whether a consumer being deleted is gone, and the first back-off after throttling. */
  private val MinPollMs = 200L
  private val MaxPollMs = 5000L

  /** How long stop() waits for a resolution under way to reach its next wait (or end). */
  private val StopWaitMs = 30000L
}

private[sparkkinesis] object FanOutConsumer {

  /**
   * When the `n`-th look (from 1) whether a consumer is ACTIVE is due, in ms from its registration: 50 ms, then each
   * wait 50 ms longer than the one before, 1 s at most (from the 20th, 10.5 s on): kinesis-mock activates a consumer in
   * about 500 ms, found within 250 ms of it, AWS in seconds, found within 1 s. With the first describe, 6 calls in the
   * first second, well inside DescribeStreamConsumer's 20 calls per second per stream.
   */
  def activationLookAfterMs(n: Int): Long = {
    val growing = math.min(n, ActivationLookMaxMs / ActivationLookStepMs).toLong
    ActivationLookStepMs * growing * (growing + 1) / 2 + ActivationLookMaxMs * (n - growing)
  }

  private val ActivationLookStepMs = 50
  private val ActivationLookMaxMs = 1000

  /** How far the service's clock may be from this one: AWS refuses requests signed more than 5 minutes off. */
  val RegistrationClockSkewMs: Long = 5 * 60 * 1000L
}
