"""spark-kinesis for PySpark: the Amazon Kinesis Data Streams source and sink (format ``aws-kinesis``) with its
JARs inside, typed options and payload helpers.

Example::

    from pyspark.sql import SparkSession
    from pyspark_kinesis import KinesisSinkOptions, KinesisSourceOptions, configure_spark_with_kinesis
    from pyspark_kinesis import parse_json_payload

    spark = configure_spark_with_kinesis(SparkSession.builder.appName("orders")).getOrCreate()
    options = KinesisSourceOptions(stream_name="orders", region="us-east-1", starting_position="TRIM_HORIZON")
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    orders = parse_json_payload(events, "orderId STRING, amount DOUBLE")

    sink = KinesisSinkOptions(stream_name="big-orders", region="us-east-1")
    (orders.where("amount > 1000").selectExpr("to_json(struct(orderId, amount)) AS data", "orderId AS partitionKey")
        .writeStream.format("aws-kinesis").options(**sink.as_options())
        .option("checkpointLocation", "/tmp/big-orders").start())

With Spark Connect, ``configure_spark_with_kinesis(SparkSession.builder.remote("local[*]"))`` starts a local server
with the JARs; for a remote server, ``spark = attach_kinesis(SparkSession.builder.remote("sc://...").getOrCreate())``.

In real-time mode (``.trigger(realTime=...)``), whose sink allowlist names ``foreach`` but not ``aws-kinesis``,
write through :func:`kinesis_foreach` instead: ``kinesis_foreach(df.writeStream, sink).outputMode("update")``.
"""

from ._foreach import kinesis_foreach
from ._sink_options import KinesisSinkOptions
from ._source_options import KinesisSourceOptions
from ._spark import SUPPORTED_SPARK_LINES, attach_kinesis, configure_spark_with_kinesis, jar_path, jar_paths
from ._version import __version__
from .payloads import data_as_json, data_as_text, parse_json_payload

__all__ = [
    "KinesisSinkOptions",
    "KinesisSourceOptions",
    "SUPPORTED_SPARK_LINES",
    "__version__",
    "attach_kinesis",
    "configure_spark_with_kinesis",
    "data_as_json",
    "data_as_text",
    "jar_path",
    "jar_paths",
    "kinesis_foreach",
    "parse_json_payload",
]
