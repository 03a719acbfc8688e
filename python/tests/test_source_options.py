"""KinesisSourceOptions: every option's good and bad values (refused by Python where the value's pure data says so,
else by the connector when loaded), Python types, conversions.

test_options_vs_jvm.py compares Python's verdicts with the connector's on many more values."""

from __future__ import annotations

import doctest
import inspect
import typing
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional, Tuple

import pytest
from test_options_vs_jvm import provider_verdict

import pyspark_kinesis
from pyspark_kinesis import KinesisSourceOptions
from pyspark_kinesis._registry import OPTIONS
from pyspark_kinesis._source_options import SOURCE_OPTIONS

BY_NAME = {o.name: o for o in SOURCE_OPTIONS}
CREDENTIALS = {"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "aws_secret_key": "secret"}

# Per option: (a typed good value, the option text it becomes, a bad option text, the connector's reason, or None
# where only its start is known: the connector's own message on a class it cannot load).
CASES: Dict[str, Tuple[Any, str, str, Optional[str]]] = {
    "kinesis.streamName": (
        "orders,payments",
        "orders,payments",
        "orders/2024",
        "it is not a stream name or a comma-separated list of them",
    ),
    "kinesis.streamARN": (
        "arn:aws:kinesis:us-east-1:123456789012:stream/orders",
        "arn:aws:kinesis:us-east-1:123456789012:stream/orders",
        "orders",
        "it is not a Kinesis stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>) or a "
        "comma-separated list of them",
    ),
    "kinesis.shardsPerTask": (10, "10", "0", "it is outside 1..100"),
    "kinesis.allowStreamRemoval": (True, "true", "yes", "it is not a boolean"),
    "kinesis.endingPosition": ("LATEST", "LATEST", "SOON", "it is not a known starting position"),
    "kinesis.checkNewRecordThreads": (16, "16", "65", "it is outside 1..64"),
    "kinesis.region": ("eu-west-1", "eu-west-1", "Europe", "it is not an AWS region name"),
    "kinesis.endpointUrl": (
        "http://127.0.0.1:4566",
        "http://127.0.0.1:4566",
        "localhost:4566",
        "it does not start with http:// or https://",
    ),
    "kinesis.consumerType": ("SubscribeToShard", "SubscribeToShard", "Push", "it is not one of the accepted values"),
    "kinesis.startingPosition": ("TRIM_HORIZON", "TRIM_HORIZON", "OLDEST", "it is not a known starting position"),
    "kinesis.failOnDataLoss": (False, "false", "no", "it is not a boolean"),
    "kinesis.maxFetchRecordsPerShard": (5000, "5000", "0", "it is outside 1..100000000"),
    "kinesis.maxFetchTimePerShard": (timedelta(seconds=5), "5000ms", "3601", "it is longer than 1h"),
    "kinesis.describeShardInterval": (timedelta(seconds=2), "2000ms", "2h", "it is longer than 1h"),
    "kinesis.getRecords.numberOfRecordsPerFetch": (500, "500", "10001", "it is outside 1..10000"),
    "kinesis.getRecords.fetchInterval": (250, "250", "-1", "it is not a duration"),
    "kinesis.idleShardCheckInterval": (timedelta(milliseconds=250), "250ms", "61m", "it is longer than 1h"),
    "kinesis.realTime.pollInterval": (timedelta(milliseconds=400), "400ms", "10ms", "it is shorter than 50ms"),
    "kinesis.realTime.maxTasks": (8, "8", "0", "it is outside 1..10000"),
    "kinesis.maxRecordsPerTrigger": (5000, "5000", "0", "it is outside 1..9223372036854775807"),
    "kinesis.maxBytesPerTrigger": (104857600, "104857600", "100m", "it is not a whole number"),
    "kinesis.getRecords.maxBytesPerSecondPerShard": (1048576, "1048576", "2", "it is outside 1024..2097152"),
    "kinesis.driverRetryTimeout": (timedelta(minutes=5), "300000ms", "soon", "it is not a duration"),
    "kinesis.clientNumRetries": (5, "5", "many", "it is not a whole number"),
    "kinesis.clientRetryInterval": ("100ms", "100ms", "0", "it is shorter than 1ms"),
    "kinesis.clientMaxRetryInterval": (20000, "20000", "600001", "it is longer than 10m"),
    "kinesis.metadataPath": ("/tmp/kinesis-metadata", "/tmp/kinesis-metadata", "  ", "the value is empty"),
    "kinesis.awsAccessKeyId": ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "", "the value is empty"),
    "kinesis.awsSecretKey": ("secret", "secret", "", "the value is empty"),
    "kinesis.sessionToken": ("token", "token", "", "the value is empty"),
    "kinesis.deaggregation.dropMisroutedRecords": (True, "true", "1", "it is not a boolean"),
    "kinesis.verifyCertificate": (False, "false", "no", "it is not a boolean"),
    "kinesis.stsRoleArn": (
        "arn:aws:iam::123456789012:role/reader",
        "arn:aws:iam::123456789012:role/reader",
        "arn:aws:iam::12345:role/reader",
        "it is not an IAM role ARN",
    ),
    "kinesis.stsSessionName": ("query-7", "query-7", "a", "it is not a valid role session name"),
    "kinesis.stsExternalId": ("partner-42", "partner-42", "x", "it is not a valid external id"),
    "kinesis.stsEndpointUrl": (
        "https://sts.eu-west-1.amazonaws.com",
        "https://sts.eu-west-1.amazonaws.com",
        "sts.eu-west-1.amazonaws.com",
        "it does not start with http:// or https://",
    ),
    "kinesis.credentialProviderParam": ("vault-path", "vault-path", "", "the value is empty"),
    "kinesis.credentialProviderClass": ("com.example.Provider", "com.example.Provider", "1abc", None),
    "kinesis.metadataCommitterType": ("DYNAMODB", "DYNAMODB", "S3", "it is not one of the accepted values"),
    "kinesis.dynamodb.tableName": ("query-metadata", "query-metadata", "ab", "it is not a valid DynamoDB table name"),
    "kinesis.dynamodb.endpointUrl": (
        "http://127.0.0.1:8000",
        "http://127.0.0.1:8000",
        "127.0.0.1:8000",
        "it does not start with http:// or https://",
    ),
    "kinesis.consumerName": ("my-query", "my-query", "my query", "it is not a valid consumer name"),
    "kinesis.consumerArn": (
        "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000",
        "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000",
        "arn:c",
        "it is not a stream consumer ARN",
    ),
    "kinesis.deregisterConsumerOnStop": (False, "false", "keep", "it is not a boolean"),
    "kinesis.consumerTags": ({"team": "orders"}, '{"team": "orders"}', "team=orders", "it is not a JSON object"),
    "kinesis.subscribeToShard.timeout": (30, "30", "301", "it is longer than 5m"),
    "kinesis.subscribeToShard.maxRetries": (3, "3", "101", "it is outside 0..100"),
    "kinesis.emitConsumerLagMetrics": (True, "true", "maybe", "it is not a boolean"),
    "kinesis.cloudwatch.namespace": (
        "Team/Orders",
        "Team/Orders",
        "AWS/Kinesis",
        "it is not a custom CloudWatch namespace",
    ),
    "kinesis.cloudwatch.dimensions": (
        "StreamName={stream},Query={queryId}",
        "StreamName={stream},Query={queryId}",
        "StreamName",
        "a pair is not Name=Value",
    ),
    "kinesis.cloudwatch.region": ("eu-west-1", "eu-west-1", "Europe", "it is not an AWS region name"),
    "kinesis.cloudwatch.endpointUrl": (
        "https://monitoring.eu-west-1.amazonaws.com",
        "https://monitoring.eu-west-1.amazonaws.com",
        "monitoring.eu-west-1.amazonaws.com",
        "it does not start with http:// or https://",
    ),
    "kinesis.glue.endpointUrl": (
        "https://glue.eu-west-1.amazonaws.com",
        "https://glue.eu-west-1.amazonaws.com",
        "glue.eu-west-1.amazonaws.com",
        "it does not start with http:// or https://",
    ),
}


def test_the_cases_cover_every_option_of_the_registry() -> None:
    assert set(CASES) == set(BY_NAME)


def _with_companions(option: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Options that need others (credentials come in pairs) get them."""
    base: Dict[str, Any] = {"stream_name": "s"}
    if option in ("kinesis.awsAccessKeyId", "kinesis.awsSecretKey", "kinesis.sessionToken"):
        base.update(CREDENTIALS)
    if option in ("kinesis.stsSessionName", "kinesis.stsExternalId", "kinesis.stsEndpointUrl"):
        base["sts_role_arn"] = "arn:aws:iam::123456789012:role/reader"
    if option == "kinesis.credentialProviderParam":
        base["credential_provider_class"] = "com.example.Provider"
    if option in ("kinesis.consumerType", "kinesis.consumerTags"):
        base["consumer_name"] = "my-query"
    if option.startswith("kinesis.cloudwatch."):
        base["emit_consumer_lag_metrics"] = True
    return {**base, **arguments}


@pytest.mark.parametrize("name", sorted(CASES))
def test_given_a_good_value_when_built_then_the_option_text_is_the_connectors(name: str) -> None:
    option = BY_NAME[name]
    good, text, _, _ = CASES[name]
    options = KinesisSourceOptions(**_with_companions(name, {option.argument: good})).as_options()
    assert options[name] == text


@pytest.mark.parametrize("name", sorted(CASES))
def test_given_a_bad_value_then_python_or_else_the_connector_refuses_it_with_the_connectors_message(
    spark: Any, name: str
) -> None:
    option = BY_NAME[name]
    _, _, bad, reason = CASES[name]
    raw = {"kinesis.streamName": "s", "kinesis.awsAccessKeyId": "A", "kinesis.awsSecretKey": "S", name: bad}
    shown = "<redacted>" if option.secret else f"'{bad}'"
    expected = f"Invalid value {shown} for option {name}: {reason}. Accepted: {option.accepted}."
    connector = provider_verdict(spark, raw) or ""
    if reason is None:
        assert connector.startswith(f"Invalid value {shown} for option {name}: ")
    else:
        assert connector == expected
    if "values" in option.data:  # an enum's members are pure data: Python refuses the text before Spark starts
        with pytest.raises(ValueError) as raised:
            KinesisSourceOptions.from_options(raw)
        assert str(raised.value) == connector
    else:  # the grammar is the connector's alone: Python passes the text on
        assert KinesisSourceOptions.from_options(raw).as_options()[name] == bad
    if (
        "min" in option.data and bad.lstrip("-").isdigit()
    ):  # a number's range is pure data: Python refuses a typed int out of range
        with pytest.raises(ValueError) as raised:
            KinesisSourceOptions(**_with_companions(name, {option.argument: int(bad)}))
        assert str(raised.value) == connector


def test_the_source_takes_the_options_whose_usage_is_source_or_both() -> None:
    assert [o.name for o in SOURCE_OPTIONS] == [o.name for o in OPTIONS if o.usage in ("source", "both")]
    assert {o.usage for o in SOURCE_OPTIONS} == {"source", "both"}
    assert not any(o.name.startswith("kinesis.sink.") for o in SOURCE_OPTIONS)


def test_given_a_sink_option_then_the_source_refuses_it_and_names_the_sink_builder() -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSourceOptions(stream_name="s", record_ttl=60000)  # type: ignore[call-arg]
    assert str(raised.value) == (
        "record_ttl (kinesis.sink.recordTtl) is read by the sink (df.write, df.writeStream) only; the source "
        "(spark.readStream) does not read it. Give it to KinesisSinkOptions, or leave it out."
    )
    with pytest.raises(ValueError) as raised:
        KinesisSourceOptions.from_options({"kinesis.streamName": "s", "Kinesis.Sink.AggregationEnabled": "false"})
    assert str(raised.value) == (
        "Option kinesis.sink.aggregationEnabled is read by the sink (df.write, df.writeStream) only; the source "
        "(spark.readStream) does not read it. Give it to KinesisSinkOptions, or leave it out."
    )


def test_given_the_arguments_then_there_is_one_typed_keyword_per_option() -> None:
    parameters = inspect.signature(KinesisSourceOptions).parameters
    assert [p for p in parameters if p != "unknown"] == [o.argument for o in SOURCE_OPTIONS]
    assert parameters["stream_name"].default is inspect.Parameter.empty
    hints = typing.get_type_hints(KinesisSourceOptions.__init__)
    assert hints["stream_name"] is str
    assert hints["max_fetch_records_per_shard"] == typing.Optional[int]
    assert all(o.argument in hints for o in SOURCE_OPTIONS)
    assert all(f":param {o.argument}:" in (KinesisSourceOptions.__doc__ or "") for o in SOURCE_OPTIONS)


def test_given_other_connectors_names_then_the_docstring_shows_them_beside_the_option() -> None:
    doc = " ".join((KinesisSourceOptions.__doc__ or "").split())
    assert "also accept it as ``streamName`` (qubole/roncemer, Databricks). Accepted:" in doc
    assert "``initialPosition`` (Databricks)" in doc
    assert "``kinesis.executor.maxFetchTimeInMs`` (qubole/roncemer)" in doc


def test_given_a_misspelt_keyword_then_the_closest_option_is_named() -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSourceOptions(stream_name="s", starting_postion="LATEST")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Unknown option 'starting_postion'. Did you mean starting_position (kinesis.startingPosition)? The accepted "
        "options are listed at https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md."
    )


def test_given_a_misspelt_option_name_then_the_message_is_the_connectors() -> None:
    with pytest.raises(ValueError) as raised:
        KinesisSourceOptions.from_options({"kinesis.streamName": "s", "kinesis.stratingPosition": "LATEST"})
    assert str(raised.value) == (
        "Unknown option 'kinesis.stratingposition'. Did you mean kinesis.startingPosition? The accepted options are "
        "listed at https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md."
    )


def test_given_other_spellings_the_connector_accepts_then_from_options_takes_them_as_given() -> None:
    given = {
        "kinesis.streamName": "s",
        "kinesis.kinesisRegion": "us-east-1",
        "INITIALPOSITION": "latest",
        "kinesis.getRecords.fetchIntervalMs": "250",
        "kinesis.minBatchesToRetain": "5",
    }
    assert KinesisSourceOptions.from_options(given).as_options() == {
        "kinesis.streamName": "s",
        "kinesis.kinesisRegion": "us-east-1",
        "initialPosition": "latest",
        "kinesis.getRecords.fetchIntervalMs": "250",
        "kinesis.minBatchesToRetain": "5",
    }


def test_given_acronyms_and_time_options_then_the_argument_names_read_naturally() -> None:
    arguments = {o.name: o.argument for o in SOURCE_OPTIONS}
    assert arguments["kinesis.streamARN"] == "stream_arn"
    assert arguments["kinesis.stsRoleArn"] == "sts_role_arn"
    assert arguments["kinesis.getRecords.fetchInterval"] == "get_records_fetch_interval"
    assert arguments["kinesis.maxFetchTimePerShard"] == "max_fetch_time_per_shard"
    assert KinesisSourceOptions(stream_name="s", stream_arn="arn:x", max_fetch_time_per_shard="2s").as_options() == {
        "kinesis.streamName": "s",
        "kinesis.streamARN": "arn:x",
        "kinesis.maxFetchTimePerShard": "2s",
    }


def test_given_no_stream_name_then_it_is_refused() -> None:
    with pytest.raises(TypeError, match="stream_name"):
        KinesisSourceOptions()  # type: ignore[call-arg]
    # Without a stream, the connector refuses the options when loaded (test_options_vs_jvm.py).
    assert KinesisSourceOptions.from_options({"kinesis.region": "us-east-1"}).as_options() == {
        "kinesis.region": "us-east-1"
    }


@pytest.mark.parametrize(
    "argument, value",
    [
        ("stream_name", 5),
        ("fail_on_data_loss", "true"),
        ("max_fetch_records_per_shard", True),
        ("max_fetch_records_per_shard", "10"),
        ("describe_shard_interval", 1.5),
        ("starting_position", 3),
    ],
)
def test_given_a_value_of_the_wrong_python_type_then_type_error_names_the_option(argument: str, value: Any) -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSourceOptions(**{"stream_name": "s", argument: value})
    assert str(raised.value).startswith(f"{argument} (kinesis.")
    assert "Accepted:" in str(raised.value)


def test_given_python_values_then_they_become_the_connectors_text() -> None:
    at = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    assert KinesisSourceOptions(stream_name="s", starting_position=at).as_options()["kinesis.startingPosition"] == (
        "AT_TIMESTAMP 2024-05-01T12:00:00+00:00"
    )
    per_shard = {"shardId-000000000000": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "4959"}}
    text = KinesisSourceOptions(stream_name="s", starting_position=per_shard).as_options()["kinesis.startingPosition"]
    assert text == '{"shardId-000000000000": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "4959"}}'
    assert KinesisSourceOptions(stream_name="s", describe_shard_interval=750).as_options() == {
        "kinesis.streamName": "s",
        "kinesis.describeShardInterval": "750",
    }
    assert (
        KinesisSourceOptions(stream_name="s", describe_shard_interval="1m").as_options()[
            "kinesis.describeShardInterval"
        ]
        == "1m"
    )


def test_given_ambiguous_python_values_then_they_are_refused() -> None:
    with pytest.raises(ValueError, match="without a time zone"):
        KinesisSourceOptions(stream_name="s", starting_position=datetime(2024, 5, 1))
    with pytest.raises(ValueError, match="whole number of milliseconds"):
        KinesisSourceOptions(stream_name="s", describe_shard_interval=timedelta(microseconds=1500))


def test_given_options_that_belong_together_then_the_connector_checks_them_together(spark: Any) -> None:
    def load(**arguments: Any) -> str:
        return provider_verdict(spark, KinesisSourceOptions(stream_name="s", **arguments).as_options()) or ""

    assert "go together" in load(aws_access_key_id="A")
    assert "kinesis.sessionToken is set without" in load(session_token="t")
    assert "kinesis.clientMaxRetryInterval (100ms) is smaller than" in load(client_max_retry_interval=100)


def test_given_enhanced_fan_out_then_the_connector_wants_exactly_one_consumer(spark: Any) -> None:
    arn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1700000000"

    def load(**arguments: Any) -> Optional[str]:
        return provider_verdict(spark, KinesisSourceOptions(stream_name="s", **arguments).as_options())

    assert load(consumer_type=" efo ") == (
        "Option kinesis.consumerType is 'efo', enhanced fan-out, which reads through a stream consumer, but none is "
        "named: set option kinesis.consumerName to a name for the consumer this query registers and manages, for "
        'example .option("kinesis.consumerName", "my-query"), or option kinesis.consumerArn to the ARN of an existing '
        "consumer (or set kinesis.consumerType to GetRecords to poll)."
    )
    assert load(consumer_type="SubscribeToShard", consumer_name="q", consumer_arn=arn) == (
        f"Options kinesis.consumerName ('q') and kinesis.consumerArn ('{arn}') are both set, but kinesis.consumerType "
        "'SubscribeToShard' reads through one consumer: set kinesis.consumerName for a consumer the query manages, or "
        "kinesis.consumerArn for an existing consumer it only reads through, not both."
    )
    assert load(consumer_type="EFO", consumer_arn=arn) is None
    # Polling reads through no consumer: options kept for a later run on enhanced fan-out are no concern of it.
    assert load(consumer_name="q", consumer_arn=arn) is None


def test_given_secrets_then_repr_never_shows_them() -> None:
    options = KinesisSourceOptions(stream_name="s", aws_access_key_id="AKIAX", aws_secret_key="very-secret")
    assert repr(options) == (
        "KinesisSourceOptions(stream_name='s', aws_access_key_id=<redacted>, aws_secret_key=<redacted>)"
    )
    assert options.as_options()["kinesis.awsSecretKey"] == "very-secret"
    aliased = KinesisSourceOptions.from_options(
        {"kinesis.streamName": "s", "awsSecretKey": "very-secret", "kinesis.awsAccessKeyId": "AKIAX"}
    )
    assert "very-secret" not in repr(aliased) and "'awsSecretKey'=<as given>" in repr(aliased)


def test_given_options_by_name_then_from_options_round_trips_and_refuses_others() -> None:
    options = KinesisSourceOptions(stream_name="s", region="us-east-1", fail_on_data_loss=False)
    assert KinesisSourceOptions.from_options(options.as_options()) == options
    assert KinesisSourceOptions.from_options({"KINESIS.STREAMNAME": "s"}).as_options() == {"kinesis.streamName": "s"}
    with pytest.raises(ValueError, match="'checkpointLocation' is not an option of the connector"):
        KinesisSourceOptions.from_options({"kinesis.streamName": "s", "checkpointLocation": "/tmp/c"})


def test_the_docstring_examples_hold() -> None:
    for module in (pyspark_kinesis._source_options, pyspark_kinesis._builder, pyspark_kinesis._spark):
        result = doctest.testmod(module, extraglobs={"KinesisSourceOptions": KinesisSourceOptions})
        assert result.failed == 0, f"doctest of {module.__name__} failed"
        assert result.attempted > 0 or module is pyspark_kinesis._builder
