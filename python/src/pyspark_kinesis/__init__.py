"""spark-kinesis for PySpark: the Amazon Kinesis Data Streams source (format ``aws-kinesis``) with its JARs
inside, typed options and payload helpers.

Example::

    from pyspark.sql import SparkSession
    from pyspark_kinesis import KinesisSourceOptions, configure_spark_with_kinesis, parse_json_payload

    spark = configure_spark_with_kinesis(SparkSession.builder.appName("orders")).getOrCreate()
    options = KinesisSourceOptions(stream_name="orders", region="us-east-1", starting_position="TRIM_HORIZON")
    events = spark.readStream.format("aws-kinesis").options(**options.as_options()).load()
    orders = parse_json_payload(events, "orderId STRING, amount DOUBLE")
"""

from ._source_options import KinesisSourceOptions
from ._spark import SUPPORTED_SPARK_LINES, configure_spark_with_kinesis, jar_path
from ._version import __version__
from .payloads import data_as_json, data_as_text, parse_json_payload

__all__ = [
    "KinesisSourceOptions",
    "SUPPORTED_SPARK_LINES",
    "__version__",
    "configure_spark_with_kinesis",
    "data_as_json",
    "data_as_text",
    "jar_path",
    "parse_json_payload",
]
