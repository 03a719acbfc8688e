"""Reading the ``data`` column of the ``aws-kinesis`` source: the payload as UTF-8 text, or as JSON with a schema."""

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


__all__ = ["data_as_json", "data_as_text", "parse_json_payload"]
