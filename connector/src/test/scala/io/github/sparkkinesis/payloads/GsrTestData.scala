package io.github.sparkkinesis.payloads

import java.io.ByteArrayOutputStream
import java.net.URI
import java.util.UUID

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}
import org.apache.avro.io.EncoderFactory
import org.apache.spark.sql.catalyst.InternalRow

import io.github.sparkkinesis.client.{ClientSettings, RetrySettings}

/** Two versions of an order schema, and Avro payloads of them, for the GSR tests. */
object GsrTestData {

  /**
   * A registry holding `versions`, counting fetches, failing them as throttled while `down`; a target of its own, so
   * the JVM's caches start empty.
   */
  final class Registry(versions: SchemaVersion*) {
    var fetches = 0
    var down = false
    val target: GlueTarget = Target.copy(endpoint = Some(new URI(s"http://registry-${UUID.randomUUID}")))

    def lookup(id: UUID): Either[String, SchemaVersion] = {
      // As SchemaVersionCache answers for a registry that throttles.
      if (down) return Left(s"schema version $id cannot be fetched: GetSchemaVersion failed: throttled")
      fetches += 1
      versions.find(_.id == id).toRight(s"schema version $id is not in the registry")
    }
  }

  /** A decoded row's fields, as Spark's internal values (null for null). */
  def fields(row: Any): Seq[Any] = {
    val r = row.asInstanceOf[InternalRow]
    (0 until r.numFields).map(i => if (r.isNullAt(i)) null else r.get(i, null))
  }

  /** Version 1: id, amount (int), note; version 2 drops note, widens amount to long and adds currency (default). */
  val V1: Schema = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"shop","fields":[
      |{"name":"id","type":"string"},
      |{"name":"amount","type":"int"},
      |{"name":"note","type":["null","string"],"default":null}]}""".stripMargin)

  val V2: Schema = new Schema.Parser().parse(
    """{"type":"record","name":"Order","namespace":"shop","fields":[
      |{"name":"id","type":"string"},
      |{"name":"amount","type":"long"},
      |{"name":"currency","type":"string","default":"EUR"}]}""".stripMargin)

  val V1Id: UUID = UUID.fromString("0f8e3a52-7c1d-4d7e-9a55-1c2b3d4e5f60")
  val V2Id: UUID = UUID.fromString("9b1d2c3e-4f50-4a6b-8c7d-0e1f2a3b4c5d")

  val Target: GlueTarget = GlueTarget(ClientSettings(Some("us-east-1"), None, None, RetrySettings(0, 100, 100)), None)

  def order1(id: String, amount: Int, note: String): GenericRecord = {
    val r = new GenericData.Record(V1)
    r.put("id", id)
    r.put("amount", amount)
    r.put("note", note)
    r
  }

  def order2(id: String, amount: Long, currency: String): GenericRecord = {
    val r = new GenericData.Record(V2)
    r.put("id", id)
    r.put("amount", amount)
    r.put("currency", currency)
    r
  }

  def avro(record: GenericRecord): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val encoder = EncoderFactory.get().binaryEncoder(out, null)
    new GenericDatumWriter[GenericRecord](record.getSchema).write(record, encoder)
    encoder.flush()
    out.toByteArray
  }
}
