"""The Kinesis stream as a streaming table, and a copy of every record to a second stream through a sink.

The source's and the sink's options come from the pipeline's configuration (spark-pipeline.yml): keys under
kinesis.example.source. and kinesis.example.sink., without that prefix.
"""

from typing import Dict

from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession

# The pipeline's session (Spark 4.3 also hands it to each file as `spark`; Spark 4.1 does not).
spark = SparkSession.active()


def options_under(prefix: str) -> Dict[str, str]:
    """The pipeline configuration's entries whose key starts with ``prefix``, keyed by the rest of the key."""
    return {key[len(prefix) :]: value for key, value in spark.conf.getAll.items() if key.startswith(prefix)}


@dp.table(comment="Every record of the Kinesis stream, once, with its shard and sequence number.")
def orders() -> DataFrame:
    return spark.readStream.format("aws-kinesis").options(**options_under("kinesis.example.source.")).load()


dp.create_sink("orders_copy", format="aws-kinesis", options=options_under("kinesis.example.sink."))


@dp.append_flow(target="orders_copy")
def copy_orders() -> DataFrame:
    # The sink writes `data` under `partitionKey`: the same key keeps each key's records in order in the copy.
    return spark.readStream.table("orders").select("data", "partitionKey")
