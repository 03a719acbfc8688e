"""Reading the ``data`` column of the ``aws-kinesis`` source: the payload as UTF-8 text, as JSON with a schema, or in
one of the formats AWS services write to Kinesis (AWS Glue Schema Registry frames, CloudWatch Logs subscriptions,
DynamoDB change records, compressed payloads), decoded by the connector's JVM functions: on a classic session
through Py4J, on Spark Connect through the SQL functions the connector's extension registers on the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Set, Union

from ._spark import SQL_EXTENSIONS

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


#: The Spark Connect sessions (by session id) whose server was found to have the connector's SQL functions.
_sessions_with_functions: Set[str] = set()


def _payload_function(name: str, data: ColumnOrName, *arguments: Union[str, Mapping[str, str]]) -> "Column":
    """The column of the connector's function ``name`` over ``data`` and ``arguments`` (strings, then options).

    On a classic session the Python Column wraps a JVM Column (``_jc``): the connector's Scala function is called on
    it through the session's Py4J gateway. A Spark Connect client has no JVM: it calls the SQL function of that name,
    which the server has when started with the connector's SQL extension; the decoding is the JVM's either way.
    """
    column = _column(data)
    if getattr(column, "_jc", None) is not None:
        return _jvm_payload_function(name, column, *arguments)
    return _connect_payload_function(name, column, *arguments)


def _jvm_payload_function(name: str, column: "Column", *arguments: Union[str, Mapping[str, str]]) -> "Column":
    from pyspark import SparkContext
    from pyspark.sql import Column

    context = SparkContext._active_spark_context
    if context is None:
        raise RuntimeError(
            f"pyspark_kinesis.payloads.{name} needs a Spark session: start one with the connector attached "
            "(configure_spark_with_kinesis(SparkSession.builder).getOrCreate())"
        )
    functions = context._jvm.io.github.sparkkinesis.payloads.functions
    given = [dict(a) if isinstance(a, Mapping) else a for a in arguments]
    return Column(getattr(functions, name)(column._jc, *given))  # type: ignore[attr-defined]


def _connect_payload_function(name: str, column: "Column", *arguments: Union[str, Mapping[str, str]]) -> "Column":
    from pyspark.sql.functions import call_function, create_map, lit

    _check_server_functions(name)
    given: List["Column"] = []
    for argument in arguments:
        if isinstance(argument, Mapping):
            if argument:  # no options: the SQL function's options argument is left out
                given.append(create_map(*[lit(part) for item in argument.items() for part in item]))
        else:
            given.append(lit(argument))
    return call_function(name, column, *given)


def _check_server_functions(name: str) -> None:
    """Raises, saying how to start the server, when the active Spark Connect session's server lacks the SQL
    function ``name`` (asked once per session: a server's functions are fixed when it starts)."""
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None or spark.session_id in _sessions_with_functions:
        return
    if not spark.catalog.functionExists(name):
        raise RuntimeError(
            f"pyspark_kinesis.payloads.{name} on Spark Connect calls the SQL function {name}, which this server "
            f"does not have: start the Spark Connect server with --conf spark.sql.extensions={SQL_EXTENSIONS} and "
            '--jars "$(python -m pyspark_kinesis jar)" (for a local server, configure_spark_with_kinesis('
            'SparkSession.builder.remote("local[*]")) does both). attach_kinesis adds the JARs to a running server, '
            "but its SQL functions are fixed when it starts."
        )
    _sessions_with_functions.add(spark.session_id)


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
    return _payload_function("cloudwatch_logs", data, mode)


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
    return _payload_function("dynamodb_change", data, item_schema, mode)


def decompress(data: ColumnOrName, codec: str, mode: str = "PERMISSIVE") -> "Column":
    """The payload decompressed with ``codec``: ``gzip``, ``zlib`` or ``zstd``.

    :param data: the binary column, usually ``"data"``.
    :param codec: the compression format.
    :param mode: ``PERMISSIVE`` (null for a payload that is not in that format) or ``FAILFAST``.

    Example::

        events.select(data_as_json("eventType STRING", decompress("data", "gzip")).alias("event"))
    """
    return _payload_function("decompress", data, codec, mode)


def _string_options(options: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """Options as the connector's functions take them: strings, booleans as ``true``/``false``."""
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
    return _payload_function("from_glue_schema_registry", data, registry, schema, _string_options(options))


def to_glue_schema_registry(
    struct: ColumnOrName, registry: str, schema: str, options: Optional[Mapping[str, str]] = None
) -> "Column":
    """A struct encoded as Avro and framed for the AWS Glue Schema Registry with the id of the version of
    ``schema`` whose definition is the writer schema (option ``avroSchema``, else derived from the struct's type);
    with option ``jsonSchema`` (a JSON Schema) the struct is written as a JSON object instead, with option
    ``protobufSchema`` (``.proto`` text) as the Protobuf message ``protobufMessage`` names (else the first one),
    its fields matched by name (a struct that does not fit is refused when the query is analysed).

    :param options: ``auto_register`` (``true`` registers a definition the registry lacks; by default the task
        fails saying so), ``compression`` (``none`` or ``zlib``), ``avroSchema``, ``jsonSchema`` or
        ``protobufSchema`` with ``protobufMessage``, and the connector's options.
    """
    return _payload_function("to_glue_schema_registry", struct, registry, schema, _string_options(options))


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
