"""``python -m pyspark_kinesis consumers`` end to end against kinesis-mock: a query registers a consumer, the tool
finds it held by the query's checkpoint, and once the checkpoint is gone prunes it (a dry run first)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any, Callable, Dict, List

from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY


def connection(tls_endpoint: str) -> Dict[str, str]:
    """Where and as whom the query and the tool reach the emulator (TLS, whose certificate only these tests accept)."""
    return {
        "kinesis.endpointUrl": tls_endpoint,
        "kinesis.region": REGION,
        "kinesis.verifyCertificate": "false",
        "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
        "kinesis.awsSecretKey": SECRET_KEY,
    }


def consumers_tool(tls_endpoint: str, *args: str) -> Dict[str, Any]:
    """Runs the tool as a user would, with the query's connection options; its JSON report."""
    command: List[str] = [sys.executable, "-m", "pyspark_kinesis", "consumers", *args, "--json"]
    for key, value in connection(tls_endpoint).items():
        command += ["--option", f"{key}={value}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the consumers tool failed ({done.returncode}): {done.stderr}"
    return json.loads(done.stdout)


def test_given_a_query_registered_a_consumer_when_its_checkpoint_is_removed_then_prune_deregisters_it_after_a_dry_run(
    spark: Any, kinesis: Any, tls_endpoint: str, new_stream: Callable[[int], str], tmp_path: Any
) -> None:
    # Given a query that read a stream through a consumer it registered and kept on stop, with tags of the user's
    stream = new_stream(1)
    kinesis.put_records(StreamName=stream, Records=[{"Data": b"r", "PartitionKey": "k"}])
    options = KinesisSourceOptions.from_options(
        {
            **connection(tls_endpoint),
            "kinesis.streamName": stream,
            "kinesis.startingPosition": "TRIM_HORIZON",
            "kinesis.consumerType": "EFO",
            "kinesis.consumerName": "py-kept",
            "kinesis.deregisterConsumerOnStop": "false",
            "kinesis.consumerTags": json.dumps({"team": "orders"}),
        }
    )
    checkpoint = tmp_path / "checkpoint"
    query = (
        spark.readStream.format("aws-kinesis")
        .options(**options.as_options())
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120), f"the query did not read what was there in 120 s: {query.status}"
    finally:
        query.stop()
    stream_arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    (consumer,) = kinesis.list_stream_consumers(StreamARN=stream_arn)["Consumers"]
    tags = {t["Key"]: t["Value"] for t in kinesis.list_tags_for_resource(ResourceARN=consumer["ConsumerARN"])["Tags"]}
    assert tags["team"] == "orders"

    # When the tool lists the stream's consumers, then the query's checkpoint holds it
    (listed,) = consumers_tool(tls_endpoint, "list", "--stream", stream)["consumers"]
    assert (listed["name"], listed["arn"], listed["status"], listed["holding"]) == (
        "py-kept",
        consumer["ConsumerARN"],
        "ACTIVE",
        "held",
    )
    assert listed["checkpoint"].endswith(f"{checkpoint}/sources/0"), listed

    # When the checkpoint is removed and the tool prunes (by ARN) without --yes, then it only says what it would do
    shutil.rmtree(checkpoint)
    dry = consumers_tool(tls_endpoint, "prune", "--stream", stream_arn, "--older-than", "0s")
    assert dry["dryRun"] is True
    assert dry["prune"] == [{"arn": consumer["ConsumerARN"], "action": "would-deregister"}]
    assert kinesis.list_stream_consumers(StreamARN=stream_arn)["Consumers"][0]["ConsumerStatus"] == "ACTIVE"

    # When it prunes with --yes, then the consumer is deregistered
    done = consumers_tool(tls_endpoint, "prune", "--stream", stream, "--older-than", "0s", "--yes")
    assert done["prune"] == [{"arn": consumer["ConsumerARN"], "action": "deregistered"}]
    left = [
        c for c in kinesis.list_stream_consumers(StreamARN=stream_arn)["Consumers"] if c["ConsumerStatus"] != "DELETING"
    ]
    assert left == []


def test_given_help_or_a_bad_command_line_then_the_tool_says_how_to_call_it() -> None:
    run = [sys.executable, "-m", "pyspark_kinesis", "consumers"]
    helped = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "usage: consumers {list,prune} --stream NAME|ARN" in helped.stdout
    refused = subprocess.run([*run, "prune"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--stream is required" in refused.stderr
    plain = [*run, "list", "--stream", "s", "--option", "kinesis.endpointUrl=http://127.0.0.1:1"]
    refused = subprocess.run(plain, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert "option kinesis.endpointUrl is 'http://127.0.0.1:1', plain HTTP" in refused.stderr
