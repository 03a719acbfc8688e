"""KinesisSinkOptions against the connector's own sink parser: the same verdict on every sink option and value,
called directly (``KinesisSinkOptions.parse``) and, for a sample, through a user's ``df.write...save()``."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import pytest
from test_options_vs_jvm import (
    CORPUS,
    agree,
    deciding_verdicts,
    java_map,
    jvm_classes,
    jvm_message,
    provider_verdict,
)

from pyspark_kinesis import KinesisSinkOptions, KinesisSourceOptions
from pyspark_kinesis._emulator import ACCESS_KEY_ID, REGION, SECRET_KEY
from pyspark_kinesis._sink_options import SINK_OPTIONS

# Values the sink's own rules turn on: the producer's endpoint (https only, no path or query) and its bounds.
SINK_CORPUS = [
    "https://127.0.0.1:4567",
    "https://127.0.0.1:4567/",
    "https://h/p",
    "https://h?q",
    "https://h/?",
    "https://h#f",
    "HTTPS://H:1",
    " https://h:1 ",
    "https://h//",
    "https://user@h:1",
    "https://[::1]:4567",
    "http://h:1",
    "99",
    "100",
    "256",
    "257",
    "30000",
    "9223372036854775806",
]

# Options together: none required (rows may name the stream), pairs, cross-option rules, any case, unknown names.
COMBINATIONS: List[Dict[str, str]] = [
    {},
    {"kinesis.region": "us-east-1"},
    {"kinesis.awsAccessKeyId": "AKIA"},
    {"kinesis.awsSecretKey": "x"},
    {"kinesis.sessionToken": "t"},
    {"kinesis.sessionToken": "t", "kinesis.awsAccessKeyId": "a"},
    {"kinesis.sessionToken": "t", "kinesis.awsAccessKeyId": "a", "kinesis.awsSecretKey": "b"},
    {"kinesis.clientMaxRetryIntervalMs": "100"},
    {"kinesis.clientRetryIntervalsMs": "20000", "kinesis.clientMaxRetryIntervalMs": "20000"},
    {"KINESIS.ENDPOINTURL": "http://127.0.0.1:4568", "Kinesis.VerifyCertificate": "FALSE"},
    {"kinesis.endpointUrl": "https://127.0.0.1:4567/x", "kinesis.clientRetryIntervalsMs": "20000"},
    {"kinesis.Sink.RecordTTL": "100", "kinesis.SINK.maxconnections": "1"},
    {"kinesis.sink.recordMaxBufferedTimeMs": "50", "kinesis.sink.recordTtl": "2m"},
    {"kinesis.executor.recordMaxBufferedTime": "50", "kinesis.sink.recordMaxBufferedTime": "1s"},
    {"kinesis.sink.recordTl": "100"},
    {"kinesis.sink": "x"},
    {"kinesis.sink.aggregation": "false"},
]


def parser_verdict(spark: Any, options: Dict[str, str]) -> Optional[str]:
    """The sink's parser, as ``KinesisTable.newWriteBuilder`` calls it; None when it accepts the options."""
    jvm = jvm_classes(spark)
    try:
        jvm.sink_options.parse(jvm.to_scala_map(java_map(spark, options)))
        return None
    except Exception as e:
        return jvm_message(e)


def python_verdict(options: Dict[str, str]) -> Optional[str]:
    try:
        KinesisSinkOptions.from_options(options)
        return None
    except ValueError as e:
        return str(e)


@pytest.fixture
def reachable(tls_endpoint: str, new_stream: Callable[[int], str]) -> Dict[str, str]:
    """Options that reach a real stream on the emulator, so that a write the connector accepts ends quickly."""
    return {
        "kinesis.streamName": new_stream(1),
        "kinesis.region": REGION,
        "kinesis.endpointUrl": tls_endpoint,
        "kinesis.verifyCertificate": "false",
        "kinesis.awsAccessKeyId": ACCESS_KEY_ID,
        "kinesis.awsSecretKey": SECRET_KEY,
    }


def write_verdict(spark: Any, options: Dict[str, str]) -> Optional[str]:
    """A user's batch write of one row; None when it succeeds, else the connector's message."""
    row = spark.createDataFrame([("x", "k")], "data string, partitionKey string")
    try:
        row.write.format("aws-kinesis").options(**options).mode("append").save()
        return None
    except Exception as e:
        return jvm_message(e)


def test_every_sink_option_and_value_gets_the_same_verdict_in_python_and_in_the_connector(spark: Any) -> None:
    mismatches = []
    checked = 0
    cases = [(option, {option.name: value}) for option in SINK_OPTIONS for value in CORPUS + SINK_CORPUS]
    pythons = [python_verdict(options) for _, options in cases]
    for (option, options), python, jvm in zip(cases, pythons, deciding_verdicts(parser_verdict, spark, cases, pythons)):
        value = options[option.name]
        checked += 1
        value_refused = (jvm or "").startswith("Invalid value ") and f" for option {option.name}: " in (jvm or "")
        if not agree(python, jvm) or ("values" in option.data and value_refused and python is None):
            mismatches.append(f"{option.name}={value!r}\n  python: {python}\n  jvm:    {jvm}")
    assert checked == len(SINK_OPTIONS) * (len(CORPUS) + len(SINK_CORPUS))
    assert not mismatches, f"{len(mismatches)} of {checked} differ:\n" + "\n".join(mismatches)


def test_sink_options_together_get_the_same_verdict_in_python_and_in_the_connector(spark: Any) -> None:
    mismatches = []
    for options in COMBINATIONS:
        python, jvm = python_verdict(options), parser_verdict(spark, options)
        if not agree(python, jvm):
            mismatches.append(f"{options}\n  python: {python}\n  jvm:    {jvm}")
    assert not mismatches, "\n".join(mismatches)


def test_a_users_write_gets_the_parsers_verdict(spark: Any, reachable: Dict[str, str]) -> None:
    # Given options that reach the emulator, each set changed by a bad value of a sink option, a bad combination,
    # or good sink settings (None drops an option)
    bad: List[Dict[str, Optional[str]]] = [{o.name: v} for o in SINK_OPTIONS for v in ("abc", "-1", "")]
    bad += [
        {"kinesis.endpointUrl": "http://127.0.0.1:4568"},
        {"kinesis.endpointUrl": "https://127.0.0.1:1/path"},
        {"kinesis.clientMaxRetryIntervalMs": "100"},
        {"kinesis.sink.recordTl": "100"},
        {"kinesis.sessionToken": "t", "kinesis.awsAccessKeyId": None, "kinesis.awsSecretKey": None},
        {"kinesis.awsSecretKey": None},
    ]
    good: List[Dict[str, Optional[str]]] = [
        {},
        {"kinesis.sink.aggregationEnabled": "false", "kinesis.sink.maxConnections": "2"},
    ]
    mismatches = []
    tried = 0
    for change in bad + good:
        options = {k: v for k, v in {**reachable, **change}.items() if v is not None}
        python, parser = python_verdict(options), parser_verdict(spark, options)
        if change in bad and parser is None:
            continue  # a value this option accepts ("abc" as a stream name): not a question for the write
        # When a user writes a row with them
        tried += 1
        jvm = write_verdict(spark, options)
        # Then the write fails, or succeeds, as the connector's parser and the Python builder say
        if not agree(python, jvm) or jvm != parser:
            mismatches.append(f"{change}\n  python: {python}\n  jvm:    {jvm}")
        if (change in good) != (jvm is None):
            mismatches.append(f"{change}: the write was expected to {'succeed' if change in good else 'fail'}: {jvm}")
    assert tried >= 2 * len(SINK_OPTIONS), "most bad values were skipped: the corpus no longer tests the parser"
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(
    "endpoint, problem",
    [
        (
            "http://127.0.0.1:4568",
            "which speaks HTTPS only. Use the https:// endpoint (for kinesis-mock or LocalStack, "
            "the TLS port, e.g. https://127.0.0.1:4567, with kinesis.verifyCertificate=false",
        ),
        ("HTTP://localhost:4568/", "which speaks HTTPS only"),
        (
            "https://127.0.0.1:4567/kinesis",
            "the sink's producer takes a host and a port only; remove the path and query.",
        ),
        ("https://127.0.0.1:4567?x=1", "remove the path and query"),
    ],
)
def test_given_an_endpoint_the_producer_cannot_use_then_the_connector_refuses_it_naming_the_option(
    spark: Any, endpoint: str, problem: str
) -> None:
    # Given an endpoint the builder takes (the producer's rules are the connector's alone)
    assert KinesisSinkOptions(endpoint_url=endpoint).as_options() == {"kinesis.endpointUrl": endpoint}
    # When the sink's parser reads it, then it refuses it, naming the option
    message = parser_verdict(spark, {"kinesis.endpointUrl": endpoint}) or ""
    assert message.startswith(f"Invalid value '{endpoint}' for option kinesis.endpointUrl: ") and problem in message


def test_the_connector_ignores_the_other_sides_options_where_the_python_builders_refuse_them(spark: Any) -> None:
    # Given a source option given to the sink, and a sink option given to the source
    to_sink = {"kinesis.startingPosition": "LATEST"}
    to_source = {"kinesis.streamName": "s", "kinesis.sink.recordTtl": "60000"}

    # Then the connector accepts (and ignores) them, while the builders refuse them, naming the right builder
    assert parser_verdict(spark, to_sink) is None and provider_verdict(spark, to_source) is None
    with pytest.raises(ValueError, match="Give it to KinesisSourceOptions"):
        KinesisSinkOptions.from_options(to_sink)
    with pytest.raises(ValueError, match="Give it to KinesisSinkOptions"):
        KinesisSourceOptions.from_options(to_source)
    # And a bad value of the other side's option is refused by both
    assert "kinesis.sink.recordTtl" in (provider_verdict(spark, {**to_source, "kinesis.sink.recordTtl": "1"}) or "")
