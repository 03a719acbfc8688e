"""The Python option builders against the connector itself: the JAR's own registry, and the verdict of its parser on
the same values, option by option (through the provider ``load()`` calls) and together (through ``load()``). Python
checks only pure data (an enum's members, a number's range, known names): where it refuses a value, the connector
refuses it with the same message, and on an enum Python and the connector agree exactly. Everything else Python
passes on, and the connector's message is what the user sees."""

from __future__ import annotations

import functools
import json
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Tuple

from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._registry import ALIASES, OPTIONS
from pyspark_kinesis._source_options import SOURCE_OPTIONS

# Values tried on every option: each type's good and bad forms, edges of the bounds, odd text.
CORPUS = [
    "",
    " ",
    "abc",
    "x y",
    "0",
    "1",
    "-1",
    "+5",
    " 7 ",
    "1.5",
    "1_000",
    "10000",
    "10001",
    "3600",
    "3601",
    "60000",
    "600000",
    "600001",
    "100000000",
    "100000001",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999",
    "\u0661\u0662",
    "true",
    "FALSE",
    "yes",
    "500ms",
    "1 s",
    "2m",
    "3min",
    "1h",
    "2h",
    "3600000",
    "3600001",
    "1d",
    "-5ms",
    "1H",
    "http://127.0.0.1:4566",
    "https://kinesis.us-west-2.amazonaws.com",
    "HTTP://LOCALHOST:4566/",
    "ftp://host",
    "localhost:4566",
    "127.0.0.1:4566",
    "http://",
    "http:///path",
    "http://my_host:4566",
    "http://host:port",
    "http://local host",
    "http://[::1]:4566",
    "http://[::zz]:1",
    "http://a%zz",
    "http://h/p a",
    "http://999.1.1.1",
    "http://h/?q=1#f",
    "http://user@host",
    "http://-h",
    "//host",
    ":4566",
    "http:opaque",
    "http://[fe80::1%eth0]:1",
    "http://[fe80::1%]:1",
    "http://[1:2:3:4:5:6:7]",
    "http://[1:2:3:4:5:6:7:8:9]",
    "http://[12345::1]",
    "http://[::1.2.3]",
    "http://[::1]x",
    "http://[::1",
    "http://1.2.3.4.5",
    "http://a.b.c-",
    "https://kinesis.us-east-1.amazonaws.com:443/p?x#y",
    "http://h:99999999999",
    "http://h:",
    "http://\u00e9t\u00e9.fr",
    "http://h/caf\u00e9",
    "http://h/a\u00a0b",
    "http://h#a#b",
    "us-east-1",
    "US-EAST-1",
    "eu-central-1",
    "us-gov-west-1",
    "cn-north-1",
    "useast1",
    "LATEST",
    "trim_horizon",
    "EARLIEST",
    "AT_TIMESTAMP 2024-05-01T12:00:00Z",
    "at_timestamp 2024-05-01t12:00:00z",
    "AT_TIMESTAMP 2024-05-01T12:00+02:00",
    "AT_TIMESTAMP 2024-05-01T12:00:00.123456789+0200",
    "AT_TIMESTAMP 2024-05-01T12:00:00+2",
    "AT_TIMESTAMP 2024-05-01 12:00:00Z",
    "AT_TIMESTAMP 2024-02-30T00:00:00Z",
    "AT_TIMESTAMP 2024-05-01",
    "AT_TIMESTAMP yesterday",
    "AT_TIMESTAMP",
    "AT_TIMESTAMPX",
    '{"shardId-000000000000": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "4959"}}',
    '{"s": {"iteratorType": "after_sequence_number", "iteratorPosition": 12}}',
    '{"s": {"iteratorType": "AT_TIMESTAMP", "iteratorPosition": "1714564800000"}}',
    '{"s": {"iteratorType": "AT_TIMESTAMP", "iteratorPosition": "2024-05-01T12:00:00Z"}}',
    '{"s": {"iteratorType": "AT_TIMESTAMP", "iteratorPosition": "soon"}}',
    '{"s": {"iteratorType": "AT_TIMESTAMP", "iteratorPosition": ""}}',
    '{"s": {"iteratorType": "LATEST"}, "t": {"iteratorType": "TRIM_HORIZON"}}',
    '{"s": {"iteratorType": "NOPE"}}',
    '{"s": {"iteratorType": "AT_SEQUENCE_NUMBER"}}',
    '{"s": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "12a"}}',
    '{"s": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": null}}',
    '{"s": {"iteratorType": null}}',
    '{"s": 1}',
    '{"s": {"iteratorType": {"x": 1}}}',
    "{}",
    '{"metadata": {}}',
    '{"s": {"iteratorType": "LATEST"}} trailing',
    "{not json",
    "GetRecords",
    "getrecords",
    "SubscribeToShard",
    "efo",
    "Polling",
    "my-stream",
    "a" * 128,
    "a" * 129,
    "stream/name",
    "s3://bucket/meta",
    "/tmp/meta",
]

CONSUMER_ARN = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000"

# Options together: required, pairs, cross-option rules (a consumer with enhanced fan-out), names in any case, unknown
# names.
COMBINATIONS: List[Dict[str, str]] = [
    {},
    {"kinesis.region": "us-east-1"},
    {"kinesis.streamName": "s", "kinesis.awsAccessKeyId": "AKIA"},
    {"kinesis.streamName": "s", "kinesis.awsSecretKey": "x"},
    {"kinesis.streamName": "s", "kinesis.sessionToken": "t"},
    {"kinesis.streamName": "s", "kinesis.sessionToken": "t", "kinesis.awsAccessKeyId": "a"},
    {
        "kinesis.streamName": "s",
        "kinesis.sessionToken": "t",
        "kinesis.awsAccessKeyId": "a",
        "kinesis.awsSecretKey": "b",
    },
    {"kinesis.streamName": "s", "kinesis.clientMaxRetryIntervalMs": "100"},
    {"kinesis.streamName": "s", "kinesis.clientMaxRetryInterval": "100ms"},
    {"kinesis.streamName": "s", "kinesis.kinesisRegion": "us-east-1"},
    {"kinesis.streamName": "s", "region": "eu-west-1", "kinesis.region": "us-east-1"},
    {"streamName": "s", "kinesis.getRecords.fetchIntervalMs": "250", "kinesis.getRecords.fetchInterval": "1s"},
    {"kinesis.streamName": "s", "kinesis.clientRetryIntervalsMs": "20000"},
    {"kinesis.streamName": "s", "kinesis.clientRetryIntervalsMs": "20000", "kinesis.clientMaxRetryIntervalMs": "20000"},
    {"KINESIS.STREAMNAME": "s", "Kinesis.Region": "us-east-1"},
    {"kinesis.streamName": "s", "kinesis.stratingPosition": "LATEST"},
    {"kinesis.streamName": "s", "kinesis.getRecords.fetchInterval": "1"},
    {"kinesis.streamName": "s", "kinesis.awsRegion": "us-east-1"},
    {"kinesis.streamName": "s", "kinesis.": "x"},
    {"kinesis.streamName": "s", "kinesis.consumerType": "EFO"},
    {"kinesis.streamName": "s", "kinesis.consumerType": " subscribetoshard "},
    {"kinesis.streamName": "s", "kinesis.consumerType": "EFO", "kinesis.consumerName": "q"},
    {"kinesis.streamName": "s", "kinesis.consumerType": "SubscribeToShard", "kinesis.consumerArn": CONSUMER_ARN},
    {
        "kinesis.streamName": "s",
        "kinesis.consumerType": "efo",
        "kinesis.consumerName": "q",
        "kinesis.consumerArn": CONSUMER_ARN,
    },
    {"kinesis.streamName": "s", "kinesis.consumerName": "q", "kinesis.consumerArn": CONSUMER_ARN},
    {"kinesis.streamName": "s", "kinesis.consumerType": "GetRecords", "kinesis.consumerName": "q"},
]


def jvm_message(error: Exception) -> str:
    """The JVM exception's message, whether pyspark converted the exception (it does for calls it wraps) or not."""
    java = getattr(error, "java_exception", None)
    if java is not None:
        return str(java.getMessage())
    message = getattr(error, "desc", None) or getattr(error, "_desc", None) or str(error)
    return str(message).split("\n\nJVM stacktrace:")[0]


def jvm_verdict(spark: Any, options: Dict[str, str]) -> Optional[str]:
    """None when the connector accepts the options as a user's ``load()`` hands them over, else its message."""
    try:
        spark.readStream.format("aws-kinesis").options(**options).load()
        return None
    except Exception as e:
        return jvm_message(e)


@functools.lru_cache(maxsize=None)
def jvm_classes(spark: Any) -> SimpleNamespace:
    """What the verdicts call in the JVM, looked up once: py4j resolves a path such as ``jvm.io.github...`` a name at
    a time, one round trip each: looked up per verdict, they made the sweeps 2.5-4 times slower (measured)."""
    jvm = spark._jvm
    return SimpleNamespace(
        hash_map=jvm.java.util.HashMap,
        options_map=jvm.org.apache.spark.sql.util.CaseInsensitiveStringMap,
        to_scala_map=jvm.org.apache.spark.api.python.PythonUtils.toScalaMap,
        source_provider=jvm.io.github.sparkkinesis.KinesisSourceProvider(),
        sink_options=jvm.io.github.sparkkinesis.options.KinesisSinkOptions,
    )


def java_map(spark: Any, options: Dict[str, str]) -> Any:
    given = jvm_classes(spark).hash_map()
    for key, value in options.items():
        given.put(key, value)
    return given


def provider_verdict(spark: Any, options: Dict[str, str]) -> Optional[str]:
    """The same check as :func:`jvm_verdict` (``load()`` calls the provider's ``inferSchema``), called directly:
    a thousand analyses of a streaming DataFrame would take minutes."""
    jvm = jvm_classes(spark)
    try:
        jvm.source_provider.inferSchema(jvm.options_map(java_map(spark, options)))
        return None
    except Exception as e:
        return jvm_message(e)


def verdicts(
    check: Callable[[Any, Dict[str, str]], Optional[str]], spark: Any, cases: List[Dict[str, str]]
) -> List[Optional[str]]:
    """``check`` on each case, several at once: each verdict is a few py4j round trips, and thousands of them one
    after the other would spend minutes waiting on the socket (py4j gives each Python thread a connection)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda options: check(spark, options), cases))


def deciding_verdicts(
    check: Callable[[Any, Dict[str, str]], Optional[str]],
    spark: Any,
    cases: List[Tuple[Any, Dict[str, str]]],
    pythons: List[Optional[str]],
) -> List[Optional[str]]:
    """The connector's verdict on each (option, options) case where it can differ from Python's ``pythons``: where
    Python refuses, and on an enum, whose values Python checks as the connector does. Where Python passes any other
    value on, the connector has the last word whatever it says: None there, without a round trip (five in six)."""
    asked = [
        i
        for i, ((option, _), python) in enumerate(zip(cases, pythons))
        if python is not None or "values" in option.data
    ]
    answers = verdicts(check, spark, [cases[i][1] for i in asked])
    connector: List[Optional[str]] = [None] * len(cases)
    for i, jvm in zip(asked, answers):
        connector[i] = jvm
    return connector


def python_verdict(options: Dict[str, str]) -> Optional[str]:
    try:
        KinesisSourceOptions.from_options(options)
        return None
    except ValueError as e:
        return str(e)


def agree(python: Optional[str], jvm: Optional[str]) -> bool:
    """Python's verdict agrees with the connector's: when Python refuses, the connector refuses with the same
    message; when Python accepts, the connector has the last word."""
    return python is None or python == jvm


def test_the_python_registry_is_the_jars_registry(spark: Any) -> None:
    described = json.loads(spark._jvm.io.github.sparkkinesis.options.OptionsDocs.json())
    jvm = [
        (o["name"], o["usage"], o["type"], o.get("default"), o["accepted"], o["secret"], o["data"])
        for o in described["options"]
    ]
    python = [(o.name, o.usage, o.type, o.default, o.accepted, o.secret, o.data) for o in OPTIONS]
    assert python == jvm
    assert list(ALIASES) == described["aliases"]
    assert [o.name for o in SOURCE_OPTIONS] == [o[0] for o in jvm if o[1] in ("source", "both")]


def test_every_option_and_value_gets_the_same_verdict_in_python_and_in_the_connector(spark: Any) -> None:
    mismatches = []
    checked = refused = 0
    cases = [(option, {"kinesis.streamName": "s", option.name: value}) for option in SOURCE_OPTIONS for value in CORPUS]
    pythons = [python_verdict(options) for _, options in cases]
    connector = deciding_verdicts(provider_verdict, spark, cases, pythons)
    for (option, options), python, jvm in zip(cases, pythons, connector):
        value = options[option.name]
        checked += 1
        refused += python is not None
        # On an enum (booleans included) Python checks all the connector checks of the value itself.
        value_refused = (jvm or "").startswith("Invalid value ") and f" for option {option.name}: " in (jvm or "")
        if not agree(python, jvm) or ("values" in option.data and value_refused and python is None):
            mismatches.append(f"{option.name}={value!r}\n  python: {python}\n  jvm:    {jvm}")
    assert checked == len(SOURCE_OPTIONS) * len(CORPUS)
    assert refused > 0, "Python refused no value: the corpus no longer tests its checks"
    assert not mismatches, f"{len(mismatches)} of {checked} differ:\n" + "\n".join(mismatches)


def test_given_typed_numbers_out_of_range_then_python_and_the_connector_give_the_same_message(spark: Any) -> None:
    mismatches = []
    ranged = [o for o in SOURCE_OPTIONS if "min" in o.data]
    for option in ranged:
        for number in (option.data["min"] - 1, option.data["min"], option.data["max"], option.data["max"] + 1):
            try:
                KinesisSourceOptions(stream_name="s", **{option.argument: number})
                python = None
            except ValueError as e:
                python = str(e)
            jvm = provider_verdict(spark, {"kinesis.streamName": "s", option.name: str(number)})
            if python != jvm:
                mismatches.append(f"{option.name}={number}\n  python: {python}\n  jvm:    {jvm}")
    assert len(ranged) >= 5 and not mismatches, "\n".join(mismatches)


def test_given_values_whose_grammar_is_the_connectors_when_loaded_then_the_connector_refuses_them(spark: Any) -> None:
    # Given values whose grammar only the connector knows
    cases = {
        ("kinesis.streamName", "orders/2024"): "it is not a stream name or a comma-separated list of them",
        ("kinesis.region", "Europe"): "it is not an AWS region name",
        ("kinesis.describeShardInterval", "soon"): "it is not a duration",
        ("kinesis.endpointUrl", "localhost:4566"): "it does not start with http:// or https://",
        ("kinesis.startingPosition", "OLDEST"): "it is not a known starting position",
        ("kinesis.startingPosition", "AT_TIMESTAMP noon"): "'noon' is not an ISO-8601 instant",
        (
            "kinesis.startingPosition",
            '{"s1": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "x"}}',
        ): "shard s1: 'x' is not a sequence number",
        ("kinesis.endpointUrl", "http://my_host:4566"): "it names no host",
    }
    for (name, value), reason in cases.items():
        options = {"kinesis.streamName": "s", name: value}
        # When the Python builder takes them, then the connector's load() refuses them with its reason
        assert python_verdict(options) is None
        assert reason in (jvm_verdict(spark, options) or ""), (name, value)


def test_options_together_get_the_same_verdict_in_python_and_in_the_connector(spark: Any) -> None:
    mismatches = []
    samples = [{"kinesis.streamName": "s", o.name: v} for o in SOURCE_OPTIONS for v in ("abc", "-1", "1h", "")]
    cases = COMBINATIONS + samples
    loads, providers = verdicts(jvm_verdict, spark, cases), verdicts(provider_verdict, spark, cases)
    for options, jvm, provider in zip(cases, loads, providers):
        python = python_verdict(options)
        if not agree(python, jvm) or jvm != provider:
            mismatches.append(f"{options}\n  python: {python}\n  jvm:    {jvm}")
    assert not mismatches, "\n".join(mismatches)
