"""Reading the ``data`` column of the ``aws-kinesis`` source: the payload as UTF-8 text, as JSON with a schema, or in
one of the formats AWS services write to Kinesis (AWS Glue Schema Registry frames, CloudWatch Logs subscriptions,
DynamoDB change records, compressed payloads), decoded by the connector's JVM functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Optional, Union

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import ArrayType, StructType

ColumnOrName = Union["Column", str]


def _column(column: ColumnOrName) -> "Column":
    from pyspark.sql import Column
    from pyspark.sql.functions import col

    if isinstance(column, Column):
        return column
    if isinstance(column, str):
        return col(column)
    raise TypeError(f"column must be a column name or a pyspark Column, not {type(column).__name__}")


def data_as_text(column: ColumnOrName = "data") -> "Column":
    """The record payload as a string, read as UTF-8 (bytes that are not valid UTF-8 are not checked, and show
    as replacement characters).

    :param column: the binary column, ``data`` by default.

    Example::

        events.select(data_as_text().alias("text"), "partitionKey")
    """
    return _column(column).cast("string")


def data_as_json(
    schema: Union["StructType", "ArrayType", str],
    column: ColumnOrName = "data",
    options: Optional[Mapping[str, str]] = None,
) -> "Column":
    """The record payload parsed as UTF-8 JSON into ``schema``, with Spark's ``from_json``: a payload that is
    not JSON, or does not fit the schema, gives null fields rather than failing the query.

    :param schema: a ``StructType``, an ``ArrayType`` or a DDL string such as
        ``"eventType STRING, amount DOUBLE"``.
    :param column: the binary column, ``data`` by default.
    :param options: ``from_json`` options, such as ``{"timestampFormat": "yyyy-MM-dd HH:mm:ss"}``.

    Example::

        events.select(data_as_json("eventType STRING, amount DOUBLE").alias("event"))
    """
    from pyspark.sql.functions import from_json
    from pyspark.sql.types import ArrayType, StructType

    if not isinstance(schema, (str, StructType, ArrayType)):
        raise TypeError(f"schema must be a StructType, an ArrayType or a DDL string, not {type(schema).__name__}")
    return from_json(data_as_text(column), schema, dict(options or {}))


def parse_json_payload(
    events: "DataFrame",
    schema: Union["StructType", "ArrayType", str],
    column: str = "data",
    options: Optional[Mapping[str, str]] = None,
) -> "DataFrame":
    """The source's rows with the JSON payload's fields as top-level columns in place of ``data``, followed by
    the Kinesis metadata columns (``partitionKey``, ``approximateArrivalTimestamp``, ...) whose names the
    payload does not use.

    :param events: a DataFrame from ``spark.readStream.format("aws-kinesis")`` (streaming or not).
    :param schema: a ``StructType`` or a DDL string; see :func:`data_as_json`.
    :param column: the binary payload column, ``data`` by default.
    :param options: ``from_json`` options.

    Example::

        orders = parse_json_payload(events, "orderId STRING, amount DOUBLE")
        orders.groupBy("orderId").sum("amount")
    """
    payload = "__pyspark_kinesis_payload"
    parsed = events.withColumn(payload, data_as_json(schema, column, options))
    fields = parsed.select(f"{payload}.*").columns
    metadata = [c for c in events.columns if c != column and c not in fields]
    return parsed.select(*[parsed[payload][f].alias(f) for f in fields], *metadata)


# ---- CloudWatch Logs, DynamoDB change records, compressed payloads (the JVM's io.github.sparkkinesis.payloads) ----


def _jvm_payload_function(name: str, data: ColumnOrName, *arguments: str) -> "Column":
    """The column the connector's JVM function ``name`` builds from ``data`` and ``arguments``.

    A classic session's Python Column wraps a JVM Column (``_jc``): the JVM function is called on it through the
    session's Py4J gateway and its result wrapped again, so the decoding is the JVM's, never mirrored here. A Spark
    Connect client has no JVM to call, so these functions refuse to build a column there.
    """
    from pyspark import SparkContext
    from pyspark.sql import Column

    column = _column(data)
    java_column = getattr(column, "_jc", None)
    context = SparkContext._active_spark_context
    if java_column is None or context is None:
        raise RuntimeError(
            f"pyspark_kinesis.payloads.{name} builds its column with the connector's JVM functions, which need a "
            "classic Spark session started in this process (with the connector attached, see "
            "configure_spark_with_kinesis); a Spark Connect client has no JVM to call: decode on a classic session"
        )
    functions = context._jvm.io.github.sparkkinesis.payloads.functions
    return Column(getattr(functions, name)(java_column, *arguments))


def cloudwatch_logs(data: ColumnOrName, mode: str = "PERMISSIVE") -> "Column":
    """A CloudWatch Logs subscription record (gzip-compressed, as a subscription filter writes it, or not) as a struct
    ``messageType, owner, logGroup, logStream, subscriptionFilters, logEvents: array<struct<id, timestamp,
    message>>, error``. CloudWatch Logs also sends ``CONTROL_MESSAGE`` records to check the stream is reachable:
    keep ``messageType = 'DATA_MESSAGE'`` to drop them.

    :param data: the binary column, usually ``"data"``.
    :param mode: ``PERMISSIVE`` (a record that cannot be decoded gives only ``error``, the reason) or ``FAILFAST``
        (the task fails with the reason).

    Example::

        from pyspark.sql.functions import col, explode
        logs = events.select(cloudwatch_logs("data").alias("logs")).where("logs.messageType = 'DATA_MESSAGE'")
        logs.select("logs.logGroup", explode("logs.logEvents").alias("event")).select("logGroup", "event.*")
    """
    return _jvm_payload_function("cloudwatch_logs", data, mode)


def dynamodb_change(data: ColumnOrName, item_schema: Union["StructType", str], mode: str = "PERMISSIVE") -> "Column":
    """A Kinesis Data Streams for DynamoDB change record as a struct ``eventName, eventID, tableName,
    approximateCreationDateTime, keys, newImage, oldImage, error``, the keys and images typed by ``item_schema``
    from DynamoDB JSON. Numbers go into the schema's integral, floating or decimal type exactly: a number that does
    not fit (a fraction into a BIGINT, too many digits for the DECIMAL) makes the record malformed.

    :param data: the binary column, usually ``"data"``.
    :param item_schema: a ``StructType`` or a DDL string such as ``"pk STRING, qty INT, price DECIMAL(10,2)"``.
    :param mode: ``PERMISSIVE`` (a record that cannot be decoded gives only ``error``, the reason) or ``FAILFAST``.

    Example::

        changes = events.select(dynamodb_change("data", "pk STRING, qty INT").alias("c")).select("c.*")
    """
    from pyspark.sql.types import StructType

    if isinstance(item_schema, StructType):
        item_schema = item_schema.json()
    elif not isinstance(item_schema, str):
        raise TypeError(f"item_schema must be a StructType or a DDL string, not {type(item_schema).__name__}")
    return _jvm_payload_function("dynamodb_change", data, item_schema, mode)


def decompress(data: ColumnOrName, codec: str, mode: str = "PERMISSIVE") -> "Column":
    """The payload decompressed with ``codec``: ``gzip``, ``zlib`` or ``zstd``.

    :param data: the binary column, usually ``"data"``.
    :param codec: the compression format.
    :param mode: ``PERMISSIVE`` (null for a payload that is not in that format) or ``FAILFAST``.

    Example::

        events.select(data_as_json("eventType STRING", decompress("data", "gzip")).alias("event"))
    """
    return _jvm_payload_function("decompress", data, codec, mode)


def _java_options(options: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Options as the JVM functions take them: strings, booleans as ``true``/``false``."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (options or {}).items()}


# ---- AWS Glue Schema Registry ----


def from_glue_schema_registry(
    data: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]] = None
) -> "Column":
    """Records framed by the AWS Glue Schema Registry's serializers (Avro, JSON Schema or Protobuf) decoded into a
    struct of the reader schema: option ``avroSchema``, ``jsonSchema`` or ``protobufSchema`` (``.proto`` text; at most
    one of them), else the latest version of ``schema`` in ``registry`` when this is called; for Protobuf, the message
    ``protobufMessage`` names, else the first. Each record's writer version is fetched once per executor and resolved
    against the reader by the format's rules (Avro's resolution; for JSON, the reader's properties are read, others
    skipped, missing ones null; Protobuf's field numbers).

    :param data: the binary ``data`` column, or ``struct("data", "shardId", "sequenceNumber")`` to have FAILFAST
        name the failing record's position.
    :param options: ``mode`` (``PERMISSIVE``, the default: a record not decoded gives null, with the reason in the
        field named by ``errorColumn``; or ``FAILFAST``), one of ``avroSchema``, ``jsonSchema`` and
        ``protobufSchema``, ``protobufMessage``, and the connector's ``kinesis.region``, credentials and
        ``kinesis.glue.endpointUrl`` options.

    Example::

        events.select(from_glue_schema_registry("data", "shop", "orders", {"kinesis.region": "eu-west-1"}).alias("o"))
    """
    return _jvm_payload_function("from_glue_schema_registry", data, registry, schema, _java_options(options))


def to_glue_schema_registry(
    struct: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]] = None
) -> "Column":
    """A struct encoded as Avro and framed for the AWS Glue Schema Registry with the id of the version of
    ``schema`` whose definition is the writer schema (option ``avroSchema``, else derived from the struct's type);
    with option ``jsonSchema`` (a JSON Schema) the struct is written as a JSON object instead. Protobuf is not
    written: option ``protobufSchema`` is refused.

    :param options: ``auto_register`` (``true`` registers a definition the registry lacks; by default the task
        fails saying so), ``compression`` (``none`` or ``zlib``), ``avroSchema`` or ``jsonSchema``, and the
        connector's options.
    """
    return _jvm_payload_function("to_glue_schema_registry", struct, registry, schema, _java_options(options))


__all__ = [
    "cloudwatch_logs",
    "data_as_json",
    "data_as_text",
    "decompress",
    "dynamodb_change",
    "from_glue_schema_registry",
    "parse_json_payload",
    "to_glue_schema_registry",
]
