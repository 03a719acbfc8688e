"""The ``spark-submit --jars s3a://...`` route: the shaded JAR served from S3 (moto's server), Hadoop's S3A with its own
AWS SDK in the same JVM (on Spark 4, SDK v2 like the connector's, which its relocation keeps apart), a read and a write.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pyspark

import pyspark_kinesis
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY

ROOT = Path(__file__).resolve().parents[2]


def scala() -> str:
    return "2.12" if pyspark.__version__.startswith("3.5.") else "2.13"


def hadoop_version() -> str:
    """The Hadoop release inside the pip package's Spark: hadoop-aws must be the same release."""
    jars = Path(pyspark.__file__).parent / "jars"
    api = next(jars.glob("hadoop-client-api-*.jar"))
    return api.name[len("hadoop-client-api-") : -len(".jar")]


def test_given_the_shaded_jar_on_s3_when_spark_submit_loads_it_by_s3a_then_it_reads_and_writes_a_stream(
    tmp_path: Path, moto: str, endpoint: str, tls_endpoint: str, new_stream: Callable[[int], str], kinesis: Any
) -> None:
    import boto3

    version = pyspark_kinesis.__version__
    jar = ROOT / "connector" / "target" / f"scala-{scala()}" / f"spark-kinesis-assembly_{scala()}-{version}.jar"
    assert jar.is_file(), f"{jar} was not built"
    s3 = boto3.client(
        "s3", endpoint_url=moto, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test"
    )
    s3.create_bucket(Bucket="jars")
    s3.upload_file(str(jar), "jars", jar.name)
    source, target = new_stream(1), new_stream(1)
    kinesis.put_records(StreamName=source, Records=[{"Data": f"m{i}".encode(), "PartitionKey": "k"} for i in range(4)])
    credentials = f'"kinesis.awsAccessKeyId": "{ACCESS_KEY_ID}", "kinesis.awsSecretKey": "{SECRET_KEY}"'
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(f"""
            from pyspark.sql import SparkSession
            spark = SparkSession.builder.master("local[1]").getOrCreate()
            common = {{"kinesis.region": "{REGION}", {credentials}}}
            df = spark.read.format("aws-kinesis").options(**common).option("kinesis.endpointUrl", "{endpoint}") \\
                .option("kinesis.streamName", "{source}").load()
            df.selectExpr("data", "partitionKey").write.format("aws-kinesis").options(**common) \\
                .option("kinesis.endpointUrl", "{tls_endpoint}").option("kinesis.verifyCertificate", "false") \\
                .option("kinesis.streamName", "{target}").save()
            back = spark.read.format("aws-kinesis").options(**common).option("kinesis.endpointUrl", "{endpoint}") \\
                .option("kinesis.streamName", "{target}").load()
            print("ROWS", sorted(r.data.decode() for r in back.select("data").collect()))
        """)
    )
    s3a = {
        "fs.s3a.endpoint": moto,
        "fs.s3a.endpoint.region": REGION,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": "test",
        "fs.s3a.secret.key": "test",
    }
    submit = str(Path(sys.executable).parent / "spark-submit")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(Path(pyspark.__file__).parent),
           "PYSPARK_PYTHON": sys.executable}  # fmt: skip
    # spark-submit fetches --jars before it loads --packages, so S3A must be on its classpath from the start, as a
    # cluster's own Spark has it: hadoop-aws and its AWS SDK, resolved once (kept between runs) by --packages.
    ivy = ROOT / "python" / "build" / f"ivy-hadoop-aws-{hadoop_version()}"
    noop = tmp_path / "noop.py"
    noop.write_text("")
    aws = f"org.apache.hadoop:hadoop-aws:{hadoop_version()}"
    out = subprocess.run(
        [submit, "--packages", aws, "--conf", f"spark.jars.ivy={ivy}", str(noop)],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert out.returncode == 0 and list((ivy / "jars").glob("*hadoop-aws*.jar")), out.stderr[-3000:]
    command = [submit, "--driver-class-path", f"{ivy / 'jars'}/*"]
    for key, value in s3a.items():
        command += ["--conf", f"spark.hadoop.{key}={value}"]
    command += ["--conf", "spark.ui.enabled=false", "--jars", f"s3a://jars/{jar.name}", str(job)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    assert f"ROWS {sorted(f'm{i}' for i in range(4))}" in out.stdout
