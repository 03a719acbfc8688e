package io.github.sparkkinesis.aggregation

import java.io.IOException
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.collection.mutable

import com.google.protobuf.{CodedInputStream, InvalidProtocolBufferException}

/**
 * Splits records written by the Kinesis Producer Library (KPL) back into the user records they aggregate.
 *
 * The KPL aggregate format is: the 4 magic bytes `F3 89 9A C2`, a proto2 `AggregatedRecord` message, and the 16-byte
 * MD5 digest of that message. The message holds a table of partition keys (field 1), a table of explicit hash keys
 * (field 2) and the records (field 3); each record (`partition_key_index` = 1, `explicit_hash_key_index` = 2, `data` =
 * 3, `tags` = 4) points into the tables by index. The message is read field by field with `CodedInputStream`, without
 * generated classes.
 */
object KplDeaggregator {

  private val Magic: Array[Byte] = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)
  private final val DigestLength = 16

  // Protobuf tags, (field number << 3) | wire type; wire type 0 is varint, 2 is length-delimited.
  private final val PartitionKeyTableTag = (1 << 3) | 2
  private final val ExplicitHashKeyTableTag = (2 << 3) | 2
  private final val RecordTag = (3 << 3) | 2
  private final val PartitionKeyIndexTag = (1 << 3) | 0
  private final val ExplicitHashKeyIndexTag = (2 << 3) | 0
  private final val DataTag = (3 << 3) | 2

  /** Marks a record without an explicit hash key index; real indexes are never negative (checked on read). */
  private final val NoIndex = -1L

  /** Hash keys are 128-bit: Kinesis accepts explicit hash keys in [0, 2^128). */
  private val HashKeyLimit: BigInt = BigInt(1) << 128

  // MessageDigest is not thread-safe, and getInstance costs a provider lookup: one per thread.
  private val md5 = new ThreadLocal[MessageDigest] {
    override def initialValue(): MessageDigest = MessageDigest.getInstance("MD5")
  }

  /**
   * Splits a Kinesis record payload into user records; a payload that is not a valid KPL aggregate (wrong magic, bad
   * MD5, unparseable protobuf, index out of range, zero records) is returned as one plain record with subSequenceNumber
   * 0 and the given partition key.
   */
  def deaggregate(data: Array[Byte], partitionKey: String): Seq[UserRecord] =
    subRecords(data).getOrElse(UserRecord(data, partitionKey, None, 0L) :: Nil)

  /** The user records of a valid KPL aggregate, or None when `data` is not one (see [[deaggregate]]). */
  def subRecords(data: Array[Byte]): Option[Seq[UserRecord]] =
    if (hasMagic(data)) decodeAggregate(data) else None

  /**
   * The 128-bit hash key Kinesis routes a user record by: its explicit hash key, else the MD5 of its partition key
   * (UTF-8) as an unsigned big-endian integer. An explicit hash key that is not a decimal integer in [0, 2^128) is
   * ignored, as Kinesis itself would have refused it.
   */
  def hashKey(record: UserRecord): BigInt =
    record.explicitHashKey.flatMap(parseHashKey).getOrElse {
      BigInt(1, md5.get().digest(record.partitionKey.getBytes(StandardCharsets.UTF_8)))
    }

  private def parseHashKey(decimal: String): Option[BigInt] =
    try {
      val key = BigInt(decimal)
      if (key >= 0 && key < HashKeyLimit) Some(key) else None
    } catch {
      case _: NumberFormatException => None
    }

  /** The cheap test every record pays: long enough for magic and digest, and starts with the magic bytes. */
  private def hasMagic(data: Array[Byte]): Boolean =
    data.length >= Magic.length + DigestLength &&
      data(0) == Magic(0) && data(1) == Magic(1) && data(2) == Magic(2) && data(3) == Magic(3)

  /** The sub-records of a KPL aggregate, or None when `data` (which starts with the magic) is not a valid one. */
  private def decodeAggregate(data: Array[Byte]): Option[Seq[UserRecord]] = {
    val messageLength = data.length - Magic.length - DigestLength
    if (!digestMatches(data, messageLength)) None
    else {
      try decodeMessage(CodedInputStream.newInstance(data, Magic.length, messageLength))
      catch {
        // Malformed protobuf surfaces as InvalidProtocolBufferException, a subclass of IOException.
        case _: IOException => None
      }
    }
  }

  private def digestMatches(data: Array[Byte], messageLength: Int): Boolean = {
    val digest = md5.get()
    digest.update(data, Magic.length, messageLength)
    val actual = digest.digest()
    val expectedAt = Magic.length + messageLength
    var i = 0
    while (i < DigestLength && actual(i) == data(expectedAt + i)) i += 1
    i == DigestLength
  }

  /**
   * Reads an `AggregatedRecord`. Protobuf allows fields in any order, so records are collected first and their table
   * indexes resolved once the whole message (and so both tables) has been read.
   */
  private def decodeMessage(in: CodedInputStream): Option[Seq[UserRecord]] = {
    val partitionKeys = new mutable.ArrayBuffer[String]()
    val explicitHashKeys = new mutable.ArrayBuffer[String]()
    val pending = new PendingRecords
    var tag = in.readTag()
    while (tag != 0) {
      tag match {
        case PartitionKeyTableTag => partitionKeys += in.readString()
        case ExplicitHashKeyTableTag => explicitHashKeys += in.readString()
        case RecordTag => readRecord(in, pending)
        case _ => skipUnknown(in, tag)
      }
      tag = in.readTag()
    }
    if (pending.size == 0) None else Some(pending.resolve(partitionKeys, explicitHashKeys))
  }

  /** Reads one length-delimited `Record` into `pending`, checking its required fields are present. */
  private def readRecord(in: CodedInputStream, pending: PendingRecords): Unit = {
    val outerLimit = in.pushLimit(in.readRawVarint32())
    var partitionKeyIndex = NoIndex
    var explicitHashKeyIndex = NoIndex
    var data: Array[Byte] = null
    var tag = in.readTag()
    while (tag != 0) {
      tag match {
        case PartitionKeyIndexTag => partitionKeyIndex = readIndex(in)
        case ExplicitHashKeyIndexTag => explicitHashKeyIndex = readIndex(in)
        case DataTag => data = in.readByteArray()
        case _ => skipUnknown(in, tag) // tags (field 4) are not exposed
      }
      tag = in.readTag()
    }
    in.popLimit(outerLimit)
    if (partitionKeyIndex == NoIndex) throw new InvalidProtocolBufferException("record without partition_key_index")
    if (data == null) throw new InvalidProtocolBufferException("record without data")
    pending.add(partitionKeyIndex, explicitHashKeyIndex, data)
  }

  /** A uint64 table index; one at or above 2^63 reads as negative and can never be in range. */
  private def readIndex(in: CodedInputStream): Long = {
    val index = in.readUInt64()
    if (index < 0) {
      throw new InvalidProtocolBufferException(s"table index ${java.lang.Long.toUnsignedString(index)} out of range")
    }
    index
  }

  private def skipUnknown(in: CodedInputStream, tag: Int): Unit =
    if (!in.skipField(tag)) throw new InvalidProtocolBufferException("unexpected end-group tag")

  /** Decoded records awaiting their table lookups, held in parallel arrays to spare an object per record. */
  private final class PendingRecords {
    private val partitionKeyIndexes = new mutable.ArrayBuilder.ofLong
    private val explicitHashKeyIndexes = new mutable.ArrayBuilder.ofLong
    private val payloads = new mutable.ArrayBuffer[Array[Byte]]()

    def size: Int = payloads.size

    def add(partitionKeyIndex: Long, explicitHashKeyIndex: Long, data: Array[Byte]): Unit = {
      partitionKeyIndexes += partitionKeyIndex
      explicitHashKeyIndexes += explicitHashKeyIndex
      payloads += data
    }

    /** The user records, numbered in order; throws if an index points outside its table. */
    def resolve(
        partitionKeys: mutable.ArrayBuffer[String],
        explicitHashKeys: mutable.ArrayBuffer[String]): Seq[UserRecord] = {
      val pkIndexes = partitionKeyIndexes.result()
      val ehkIndexes = explicitHashKeyIndexes.result()
      val records = Vector.newBuilder[UserRecord]
      records.sizeHint(payloads.size)
      var i = 0
      while (i < payloads.size) {
        val partitionKey = lookup(partitionKeys, pkIndexes(i), "partition_key_table")
        val explicitHashKey =
          if (ehkIndexes(i) == NoIndex) None
          else Some(lookup(explicitHashKeys, ehkIndexes(i), "explicit_hash_key_table"))
        records += UserRecord(payloads(i), partitionKey, explicitHashKey, i.toLong)
        i += 1
      }
      records.result()
    }

    private def lookup(table: mutable.ArrayBuffer[String], index: Long, name: String): String =
      if (index < table.size) table(index.toInt)
      else throw new InvalidProtocolBufferException(s"index $index outside $name of ${table.size} entries")
  }
}
