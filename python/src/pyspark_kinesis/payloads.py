"""Reading the ``data`` column of the ``aws-kinesis`` source: the payload as UTF-8 text, as JSON with a schema, or
framed by the AWS Glue Schema Registry (the connector's JVM functions do the decoding)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Union

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


# ---- AWS Glue Schema Registry ---------------------------------------------------------------------------------------


def _payload_function(
    name: str, column: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]]
) -> "Column":
    """The connector's JVM function ``name`` of ``io.github.sparkkinesis.payloads.functions`` on ``column``."""
    from pyspark.sql import Column, SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError(f"{name} needs an active SparkSession with the spark-kinesis JAR")
    java_column = _column(column)._jc  # type: ignore[operator]
    jvm = session.sparkContext._jvm  # type: ignore[union-attr]
    java_options = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (options or {}).items()}
    function = getattr(jvm.io.github.sparkkinesis.payloads.functions, name)
    return Column(function(java_column, registry, schema, java_options))


def from_glue_schema_registry(
    data: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]] = None
) -> "Column":
    """Records framed by the AWS Glue Schema Registry's serializers (Avro) decoded into a struct of the reader
    schema: option ``avroSchema``, else the latest version of ``schema`` in ``registry`` when this is called. Each
    record's writer version is fetched once per executor and resolved against the reader by Avro's rules.

    :param data: the binary ``data`` column, or ``struct("data", "shardId", "sequenceNumber")`` to have FAILFAST
        name the failing record's position.
    :param options: ``mode`` (``PERMISSIVE``, the default: a record not decoded gives null, with the reason in the
        field named by ``errorColumn``; or ``FAILFAST``), ``avroSchema``, and the connector's ``kinesis.region``,
        credentials and ``kinesis.glue.endpointUrl`` options.

    Example::

        events.select(from_glue_schema_registry("data", "shop", "orders", {"kinesis.region": "eu-west-1"}).alias("o"))
    """
    return _payload_function("from_glue_schema_registry", data, registry, schema, options)


def to_glue_schema_registry(
    struct: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]] = None
) -> "Column":
    """A struct encoded as Avro and framed for the AWS Glue Schema Registry with the id of the version of
    ``schema`` whose definition is the writer schema (option ``avroSchema``, else derived from the struct's type).

    :param options: ``auto_register`` (``true`` registers a definition the registry lacks; by default the task
        fails saying so), ``compression`` (``none`` or ``zlib``), ``avroSchema``, and the connector's options.
    """
    return _payload_function("to_glue_schema_registry", struct, registry, schema, options)


__all__ = [
    "data_as_json",
    "data_as_text",
    "from_glue_schema_registry",
    "parse_json_payload",
    "to_glue_schema_registry",
]
