package io.github.sparkkinesis.aggregation

import java.io.ByteArrayOutputStream
import java.security.MessageDigest

import com.google.protobuf.CodedOutputStream

/**
 * Test-only encoder of KPL aggregated records: `aggregate` builds a valid aggregate the way the KPL does, and
 * `encodeMessage` + `frame` build any aggregate, valid or not, from raw table indexes.
 */
object KplTestAggregates {

  /** The 4 bytes every KPL aggregate starts with. */
  val Magic: Array[Byte] = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)

  /** One `Record` of the protobuf message, pointing into the key tables by index. */
  final case class Entry(
      partitionKeyIndex: Long,
      explicitHashKeyIndex: Option[Long],
      data: Array[Byte],
      tags: Seq[(String, Option[String])] = Nil)

  /**
   * A valid aggregate of `records`, each (partition key, explicit hash key, data), with repeated keys stored once in
   * the tables as the KPL does.
   */
  def aggregate(records: Seq[(String, Option[String], Array[Byte])]): Array[Byte] = {
    val partitionKeys = records.map(_._1).distinct
    val explicitHashKeys = records.flatMap(_._2).distinct
    val entries = records.map { case (partitionKey, explicitHashKey, data) =>
      Entry(partitionKeys.indexOf(partitionKey).toLong, explicitHashKey.map(explicitHashKeys.indexOf(_).toLong), data)
    }
    frame(encodeMessage(partitionKeys, explicitHashKeys, entries))
  }

  /** The protobuf `AggregatedRecord` bytes: tables first, then records, in field order as protobuf writers do. */
  def encodeMessage(partitionKeys: Seq[String], explicitHashKeys: Seq[String], entries: Seq[Entry]): Array[Byte] =
    encode { out =>
      partitionKeys.foreach(out.writeString(1, _))
      explicitHashKeys.foreach(out.writeString(2, _))
      entries.foreach(entry => out.writeByteArray(3, encodeEntry(entry)))
    }

  /** `message` between the magic bytes and its MD5 digest. */
  def frame(message: Array[Byte]): Array[Byte] =
    Magic ++ message ++ MessageDigest.getInstance("MD5").digest(message)

  private def encodeEntry(entry: Entry): Array[Byte] =
    encode { out =>
      out.writeUInt64(1, entry.partitionKeyIndex)
      entry.explicitHashKeyIndex.foreach(out.writeUInt64(2, _))
      out.writeByteArray(3, entry.data)
      entry.tags.foreach { case (key, value) =>
        out.writeByteArray(4, encode { tag => tag.writeString(1, key); value.foreach(tag.writeString(2, _)) })
      }
    }

  private def encode(write: CodedOutputStream => Unit): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(bytes)
    write(out)
    out.flush()
    bytes.toByteArray
  }
}
