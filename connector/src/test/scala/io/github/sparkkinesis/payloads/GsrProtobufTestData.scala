package io.github.sparkkinesis.payloads

/** Protobuf definitions the GSR Protobuf suites share. */
object GsrProtobufTestData {

  /** A message with a field of every protobuf type: scalars, enums, well-known types, oneof, maps, repeated, nested. */
  val AllTypes: String =
    """syntax = "proto3";
      |package t;
      |import "google/protobuf/duration.proto";
      |import "google/protobuf/timestamp.proto";
      |import "google/protobuf/wrappers.proto";
      |message All {
      |  int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
      |  int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
      |  float f = 11; double d = 12; bool b = 13; string s = 14; bytes raw = 15;
      |  Kind kind = 16; Kind unknown_kind = 17;
      |  google.protobuf.Duration took = 18; google.protobuf.Timestamp at = 19;
      |  google.protobuf.Int64Value wrapped = 20; google.protobuf.StringValue absent = 21;
      |  oneof choice { string name = 22; int32 number = 23; }
      |  map<int32, Inner> inner_by_id = 24; map<string, string> tags = 25;
      |  repeated int64 packed = 26; repeated Inner inners = 27;
      |  optional string note = 28; Inner one = 29;
      |  message Inner { bool ok = 1; repeated string labels = 2; }
      |  enum Kind { NONE = 0; SOME = 1; }
      |}""".stripMargin
}
