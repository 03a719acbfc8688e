"""Writing to Kinesis from a real-time query: the connector's JVM ``ForeachWriter``, set on a ``DataStreamWriter``.

Spark's real-time mode accepts only the sinks on its allowlist (``foreach`` among them, not ``aws-kinesis``), and
Python's own ``foreach`` hands rows to its Python worker only when a real-time batch ends. The JVM writer takes each
row as it passes, through the same producer and options as the ``aws-kinesis`` sink.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Union

from ._sink_options import KinesisSinkOptions

if TYPE_CHECKING:
    from pyspark.sql.streaming import DataStreamWriter

#: The JVM class whose ``create(options, schema)`` builds the writer; it checks the options as the sink does.
_WRITER_CLASS = "io.github.sparkkinesis.sink.KinesisForeachWriter"


def kinesis_foreach(
    writer: "DataStreamWriter", options: Union[KinesisSinkOptions, Mapping[str, str]]
) -> "DataStreamWriter":
    """Sets the connector's Kinesis writer as the ``foreach`` sink of ``writer``, so that a streaming query, in
    real-time mode too, writes its rows to Kinesis as the ``aws-kinesis`` sink would: same columns (``data``,
    ``partitionKey``, optional ``explicitHashKey`` and ``streamName``), same options, same producer. Every row of a
    batch is confirmed by Kinesis before the batch commits; a batch that fails or is replayed after a restart writes
    its rows again (at least once, as the sink).

    :param writer: ``df.writeStream`` of a classic (not Spark Connect) session with the connector attached.
    :param options: the sink's options, as :class:`KinesisSinkOptions` or a mapping of option names to strings.
    :returns: the same ``writer``, for chaining ``.trigger(realTime=...)`` and ``.start()``.
    :raises TypeError: for a ``writer`` or ``options`` of another type.
    :raises ValueError: for a Spark Connect session, which cannot hand a JVM writer to the server.
    :raises pyspark.errors.IllegalArgumentException: with the sink's message, for a bad option or a DataFrame
        without the sink's columns.

    Example::

        from pyspark_kinesis import KinesisSinkOptions, kinesis_foreach

        alerts = events.where("amount > 1000").selectExpr("data", "partitionKey")
        query = (
            kinesis_foreach(alerts.writeStream, KinesisSinkOptions(stream_name="alerts", region="eu-west-1"))
            .outputMode("update")
            .option("checkpointLocation", "/checkpoints/alerts")
            .trigger(realTime="5 minutes")
            .start()
        )
    """
    if isinstance(options, KinesisSinkOptions):
        given: Dict[str, str] = options.as_options()
    elif isinstance(options, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in options.items()):
        given = dict(options)
    else:
        raise TypeError(
            "kinesis_foreach expects the sink's options as KinesisSinkOptions or a mapping of option names to str "
            f"values, not {type(options).__name__}."
        )
    if type(writer).__module__.startswith("pyspark.sql.connect"):
        raise ValueError(
            "kinesis_foreach needs a classic Spark session: a Spark Connect client cannot hand a JVM writer to the "
            "server. Use writeStream.format('aws-kinesis') there (in real-time mode with "
            "spark.sql.streaming.realTimeMode.allowlistCheck=false), or run the query in a classic session."
        )
    jwrite = getattr(writer, "_jwrite", None)
    if jwrite is None:
        raise TypeError(f"kinesis_foreach expects df.writeStream (a DataStreamWriter), not {type(writer).__name__}.")
    from py4j.java_gateway import JavaClass
    from py4j.protocol import Py4JJavaError

    jvm = writer._spark._sc._jvm
    writer_class = jvm
    for part in _WRITER_CLASS.split("."):
        writer_class = getattr(writer_class, part)
    if not isinstance(writer_class, JavaClass):
        raise ValueError(
            f"The connector is not on this session's class path ({_WRITER_CLASS} is missing): build the session "
            "with configure_spark_with_kinesis(SparkSession.builder) before the first getOrCreate()."
        )
    try:
        jwriter = writer_class.create(given, writer._df._jdf.schema())
    except Py4JJavaError as e:
        from pyspark.errors.exceptions.captured import convert_exception

        raise convert_exception(e.java_exception) from None
    writer._jwrite = jwrite.foreach(jwriter)
    return writer
