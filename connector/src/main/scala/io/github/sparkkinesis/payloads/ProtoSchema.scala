package io.github.sparkkinesis.payloads

import scala.util.control.NonFatal

import com.google.protobuf.{
  AnyProto,
  ApiProto,
  DescriptorProtos,
  DurationProto,
  EmptyProto,
  FieldMaskProto,
  SourceContextProto,
  StructProto,
  TimestampProto,
  TypeProto,
  WrappersProto
}
import com.google.protobuf.Descriptors.{Descriptor, FileDescriptor}

import io.github.sparkkinesis.compat.JavaCollections._

/**
 * A Glue Schema Registry PROTOBUF definition (the text of one .proto file) as protobuf descriptors, and its message
 * indices: the number the GSR serializer writes before each message, which counts every message of the file, nested
 * ones and map entries too, in the order of their full names.
 */
private[payloads] final class ProtoSchema private (val file: FileDescriptor) {

  /** The file's messages by message index. */
  val byIndex: IndexedSeq[Descriptor] = {
    def withNested(d: Descriptor): Seq[Descriptor] = d +: d.getNestedTypes.asScala.toSeq.flatMap(withNested)
    file.getMessageTypes.asScala.toSeq.flatMap(withNested).sortBy(_.getFullName).toIndexedSeq
  }

  /** The message index of the message named `fullName`, if the file has it. */
  def indexOf(fullName: String): Option[Int] = Some(byIndex.indexWhere(_.getFullName == fullName)).filter(_ >= 0)

  /**
   * The message `name` names (full name, or relative to the file's package), else the file's first top-level message;
   * fails naming the messages there are.
   */
  def message(name: Option[String]): Descriptor = {
    val found = name match {
      case Some(n) =>
        val full = n.stripPrefix(".")
        byIndex.find(_.getFullName == full)
          .orElse(byIndex.find(_.getFullName == Seq(file.getPackage, full).filter(_.nonEmpty).mkString(".")))
      case None => file.getMessageTypes.asScala.headOption
    }
    found.getOrElse(throw new IllegalArgumentException(name.fold("the definition has no message")(n =>
      s"the definition has no message '$n'; its messages are ${byIndex.map(_.getFullName).mkString(", ")}")))
  }
}

private[payloads] object ProtoSchema {

  /** The files a definition may import: protobuf's well-known types, which protobuf-java carries compiled. */
  private val WellKnown: Map[String, FileDescriptor] = Seq(
    AnyProto.getDescriptor,
    ApiProto.getDescriptor,
    DescriptorProtos.getDescriptor,
    DurationProto.getDescriptor,
    EmptyProto.getDescriptor,
    FieldMaskProto.getDescriptor,
    SourceContextProto.getDescriptor,
    StructProto.getDescriptor,
    TimestampProto.getDescriptor,
    TypeProto.getDescriptor,
    WrappersProto.getDescriptor).map(f => f.getName -> f).toMap

  /** The definition's descriptors; Left: why it is not a .proto file protobuf accepts (with the line, when parsing). */
  def parse(definition: String): Either[String, ProtoSchema] =
    try {
      val proto = ProtoParser.parse(definition, "glue-schema-registry.proto")
      val imports = proto.getDependencyList.asScala.toSeq.map { name =>
        WellKnown.getOrElse(
          name,
          throw new IllegalArgumentException(s"import $name is not supported: a Glue Schema Registry version is " +
            s"one file, which may import protobuf's well-known types only (${WellKnown.keys.toSeq.sorted.mkString(
                ", ")})"))
      }
      Right(new ProtoSchema(FileDescriptor.buildFrom(proto, imports.toArray)))
    } catch { case NonFatal(e) => Left(e.getMessage) }
}
