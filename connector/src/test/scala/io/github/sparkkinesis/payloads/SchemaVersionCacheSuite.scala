package io.github.sparkkinesis.payloads

import java.net.URI
import java.util.UUID

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

import io.github.sparkkinesis.payloads.GsrTestData._

/** The executor's schema version cache: versions kept for good, failed fetches for a bounded time only. */
class SchemaVersionCacheSuite extends AnyFunSuite with Matchers {

  private val Ttl = 5000L

  /** A registry answering GetSchemaVersion from `registered`, or failing every call while `down`; counts calls. */
  private final class FakeRegistry {
    var calls = 0
    var down = false
    var registered = Map.empty[UUID, SchemaVersion]

    def version(id: UUID): SchemaVersion = {
      calls += 1
      if (down) throw new IllegalStateException("Glue GetSchemaVersion failed: 503 Service Unavailable")
      registered.getOrElse(id, throw new SchemaVersionNotFound(s"schema version $id is not in the registry"))
    }
  }

  /** A cache on a clock the test moves, a registry, and a decoder of reader V2 over both (as the expression has). */
  private final class Fixture {
    var now = 0L
    val registry = new FakeRegistry
    val cache = new SchemaVersionCache(Ttl, () => now)
    val target: GlueTarget = Target.copy(endpoint = Some(new URI(s"http://registry-${UUID.randomUUID}")))
    val decoder = new GsrAvroDecoder(target, V2, id => cache.get(target, id, registry.version))

    def decodeAll(records: Seq[Array[Byte]]): Seq[Either[DecodeFailure, Any]] = records.map(decoder.decode)
  }

  private val v1 = SchemaVersion(V1Id, V1.toString, "AVRO")
  private val records = (1 to 1000).map(i => GsrFrame.write(V1Id, avro(order1(s"o-$i", i, null)), zlib = false))

  test("Given a registry outage, when 1000 records of one version are decoded in PERMISSIVE mode, then the registry " +
    "is called once per TTL, not once per record, and the records decode once it is back and the TTL has passed") {
    // Given a registry that is down
    val f = new Fixture
    f.registry.registered = Map(V1Id -> v1)
    f.registry.down = true

    // When 1000 records of version 1 are decoded
    val during = f.decodeAll(records)

    // Then each failed, saying why, and the registry was asked once
    all(during.map(_.left.toOption.map(_.reason))) shouldBe
      Some(s"schema version $V1Id cannot be fetched: Glue GetSchemaVersion failed: 503 Service Unavailable")
    f.registry.calls shouldBe 1

    // And when the registry is back but the TTL has not passed, the failure is still remembered
    f.registry.down = false
    f.now += Ttl - 1
    f.decodeAll(records.take(10)).forall(_.isLeft) shouldBe true
    f.registry.calls shouldBe 1

    // And once the TTL has passed, one more call, and every record decodes
    f.now += 1
    f.decodeAll(records).forall(_.isRight) shouldBe true
    f.registry.calls shouldBe 2
  }

  test("Given a version the registry does not have yet, when it is registered later, then records of it decode after " +
    "the TTL: not found is not cached for good") {
    // Given a registry without version 1
    val f = new Fixture

    // When records of it are decoded
    val missing = f.decodeAll(records.take(100))

    // Then each fails saying it is not in the registry, after one call
    all(missing.map(_.left.toOption.map(_.reason))) shouldBe Some(s"schema version $V1Id is not in the registry")
    f.registry.calls shouldBe 1

    // When the version is registered and the TTL passes, then the records decode, after one more call
    f.registry.registered = Map(V1Id -> v1)
    f.now += Ttl
    f.decodeAll(records.take(100)).forall(_.isRight) shouldBe true
    f.registry.calls shouldBe 2
  }

  test("Given a version fetched once, then it is never fetched again, however long the cache lives") {
    // Given a version the cache has fetched
    val f = new Fixture
    f.registry.registered = Map(V1Id -> v1)
    f.cache.get(f.target, V1Id, f.registry.version) shouldBe Right(v1)

    // When it is asked for much later, the registry down, from another decoder
    f.now += 1000 * Ttl
    f.registry.down = true
    val other = new GsrAvroDecoder(f.target, V2, id => f.cache.get(f.target, id, f.registry.version))

    // Then it is still had, with no call
    other.decode(records.head).isRight shouldBe true
    f.registry.calls shouldBe 1
  }
}
