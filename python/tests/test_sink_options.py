"""KinesisSinkOptions: its options, their defaults, good and bad values (refused by Python where the value's pure
data says so, else by the connector's sink parser), and the options it refuses.

test_sink_options_vs_jvm.py compares Python's verdicts with the connector's on many more values."""

from __future__ import annotations

import doctest
import inspect
import typing
from datetime import timedelta
from typing import Any, Dict, Optional, Tuple

import pytest
from test_sink_options_vs_jvm import parser_verdict

import pyspark_kinesis
from pyspark_kinesis import KinesisSinkOptions
from pyspark_kinesis._registry import OPTIONS
from pyspark_kinesis._sink_options import SINK_OPTIONS

BY_NAME = {o.name: o for o in SINK_OPTIONS}
CREDENTIALS = {"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "aws_secret_key": "secret"}

# Per option: (a typed good value, the option text it becomes, a bad option text, the connector's reason, or None
# where only its start is known: the connector's own message on a class it cannot load).
CASES: Dict[str, Tuple[Any, str, str, Optional[str]]] = {
    "kinesis.streamName": (
        "orders",
        "orders",
        "orders/2024",
        "it is not a stream name or a comma-separated list of them",
    ),
    "kinesis.region": ("eu-west-1", "eu-west-1", "Europe", "it is not an AWS region name"),
    "kinesis.endpointUrl": (
        "https://127.0.0.1:4567",
        "https://127.0.0.1:4567",
        "localhost:4567",
        "it does not start with http:// or https://",
    ),
    "kinesis.clientNumRetries": (5, "5", "many", "it is not a whole number"),
    "kinesis.clientRetryInterval": (100, "100", "0", "it is shorter than 1ms"),
    "kinesis.clientMaxRetryInterval": ("20s", "20s", "600001", "it is longer than 10m"),
    "kinesis.awsAccessKeyId": ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "", "the value is empty"),
    "kinesis.awsSecretKey": ("secret", "secret", "", "the value is empty"),
    "kinesis.sessionToken": ("token", "token", "", "the value is empty"),
    "kinesis.verifyCertificate": (False, "false", "no", "it is not a boolean"),
    "kinesis.sink.producer": ("PutRecords", "PutRecords", "SDK", "it is not one of the accepted values"),
    "kinesis.sink.recordMaxBufferedTime": (timedelta(seconds=1), "1000ms", "600001", "it is longer than 10m"),
    "kinesis.sink.maxConnections": (8, "8", "257", "it is outside 1..256"),
    "kinesis.sink.aggregationEnabled": (False, "false", "yes", "it is not a boolean"),
    "kinesis.sink.strictKeyOrder": (True, "true", "always", "it is not a boolean"),
    "kinesis.sink.recordTtl": (60000, "60000", "99", "it is shorter than 100ms"),
    "kinesis.sink.maxPendingRecordsPerExecutor": (5000, "5000", "0", "it is outside 1..10000000"),
    "kinesis.sink.maxPendingBytesPerExecutor": (8388608, "8388608", "1024", "it is outside 1048576..68719476736"),
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
    "kinesis.glue.endpointUrl": (
        "https://glue.eu-west-1.amazonaws.com",
        "https://glue.eu-west-1.amazonaws.com",
        "glue.eu-west-1.amazonaws.com",
        "it does not start with http:// or https://",
    ),
}


def _with_companions(option: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """Options that need others (credentials come in pairs) get them."""
    base: Dict[str, Any] = {}
    if option in ("kinesis.awsAccessKeyId", "kinesis.awsSecretKey", "kinesis.sessionToken"):
        base.update(CREDENTIALS)
    if option in ("kinesis.stsSessionName", "kinesis.stsExternalId", "kinesis.stsEndpointUrl"):
        base["sts_role_arn"] = "arn:aws:iam::123456789012:role/reader"
    if option == "kinesis.credentialProviderParam":
        base["credential_provider_class"] = "com.example.Provider"
    return {**base, **arguments}


def test_the_sink_takes_the_options_whose_usage_is_sink_or_both_and_the_cases_cover_them() -> None:
    assert [o.name for o in SINK_OPTIONS] == [o.name for o in OPTIONS if o.usage in ("sink", "both")]
    assert set(CASES) == set(BY_NAME)
    assert {o.name for o in SINK_OPTIONS if o.usage == "sink"} == {
        "kinesis.sink.producer",
        "kinesis.sink.recordMaxBufferedTime",
        "kinesis.sink.maxConnections",
        "kinesis.sink.aggregationEnabled",
        "kinesis.sink.strictKeyOrder",
        "kinesis.sink.recordTtl",
        "kinesis.sink.maxPendingRecordsPerExecutor",
        "kinesis.sink.maxPendingBytesPerExecutor",
    }


def test_given_the_arguments_then_each_option_is_an_optional_typed_keyword_named_without_the_sink_prefix() -> None:
    # Given the builder's signature and type hints
    parameters = inspect.signature(KinesisSinkOptions).parameters
    hints = typing.get_type_hints(KinesisSinkOptions.__init__)

    # Then there is one keyword per option, in registry order, none of them required (rows may name the stream)
    assert [p for p in parameters if p != "unknown"] == [
        "stream_name",
        "region",
        "endpoint_url",
        "client_num_retries",
        "client_retry_interval",
        "client_max_retry_interval",
        "aws_access_key_id",
        "aws_secret_key",
        "session_token",
        "verify_certificate",
        "producer",
        "record_max_buffered_time",
        "max_connections",
        "aggregation_enabled",
        "strict_key_order",
        "record_ttl",
        "max_pending_records_per_executor",
        "max_pending_bytes_per_executor",
        "sts_role_arn",
        "sts_session_name",
        "sts_external_id",
        "sts_endpoint_url",
        "credential_provider_class",
        "credential_provider_param",
        "glue_endpoint_url",
    ]
    assert all(p.default is None for name, p in parameters.items() if name != "unknown")
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in parameters.items() if name != "unknown")
    assert hints["stream_name"] == typing.Optional[str]
    assert hints["max_connections"] == typing.Optional[int]
    assert hints["aggregation_enabled"] == typing.Optional[bool]
    assert hints["verify_certificate"] == typing.Optional[bool]
    assert all(f":param {o.argument}:" in (KinesisSinkOptions.__doc__ or "") for o in SINK_OPTIONS)
    assert "(``kinesis.sink.recordTtl``)" in (KinesisSinkOptions.__doc__ or "")


def test_the_defaults_are_the_connectors_and_none_is_sent_unless_given() -> None:
    defaults = {o.name: o.default for o in SINK_OPTIONS if o.default is not None}
    assert defaults == {
        "kinesis.clientNumRetries": "3",
        "kinesis.clientRetryInterval": "500ms",
        "kinesis.clientMaxRetryInterval": "10s",
        "kinesis.verifyCertificate": "true",
        "kinesis.stsSessionName": "spark-kinesis",
        "kinesis.sink.producer": "KPL",
        "kinesis.sink.recordMaxBufferedTime": "100ms",
        "kinesis.sink.maxConnections": "24",
        "kinesis.sink.aggregationEnabled": "true",
        "kinesis.sink.strictKeyOrder": "false",
        "kinesis.sink.recordTtl": "30s",
        "kinesis.sink.maxPendingRecordsPerExecutor": "100000",
        "kinesis.sink.maxPendingBytesPerExecutor": "134217728",
    }
    assert KinesisSinkOptions().as_options() == {}
    assert "Default: ``30s``." in (KinesisSinkOptions.__doc__ or "")


@pytest.mark.parametrize("name", sorted(CASES))
def test_given_a_good_value_when_built_then_the_option_text_is_the_connectors(name: str) -> None:
    good, text, _, _ = CASES[name]
    options = KinesisSinkOptions(**_with_companions(name, {BY_NAME[name].argument: good})).as_options()
    assert options[name] == text


@pytest.mark.parametrize("name", sorted(CASES))
def test_given_a_bad_value_then_python_or_else_the_connector_refuses_it_with_the_connectors_message(
    spark: Any, name: str
) -> None:
    option = BY_NAME[name]
    _, _, bad, reason = CASES[name]
    raw = {"kinesis.awsAccessKeyId": "A", "kinesis.awsSecretKey": "S", name: bad}
    shown = "<redacted>" if option.secret else f"'{bad}'"
    connector = parser_verdict(spark, raw) or ""
    if reason is None:
        assert connector.startswith(f"Invalid value {shown} for option {name}: ")
    else:
        assert connector == f"Invalid value {shown} for option {name}: {reason}. Accepted: {option.accepted}."
    if "values" in option.data:  # an enum's members are pure data: Python refuses the text before Spark starts
        with pytest.raises(ValueError) as raised:
            KinesisSinkOptions.from_options(raw)
        assert str(raised.value) == connector
    else:  # the grammar is the connector's alone: Python passes the text on
        assert KinesisSinkOptions.from_options(raw).as_options()[name] == bad
    if "min" in option.data and bad.lstrip("-").isdigit():  # a number's range is pure data
        with pytest.raises(ValueError) as raised:
            KinesisSinkOptions(**_with_companions(name, {option.argument: int(bad)}))
        assert str(raised.value) == connector


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://127.0.0.1:4567",
        "https://127.0.0.1:4567/",
        "HTTPS://H:1#part",
        "https://kinesis.us-east-1.amazonaws.com",
        "http://127.0.0.1:4568",
    ],
)
def test_given_an_http_or_https_endpoint_then_the_builder_takes_it_and_leaves_the_producers_rules_to_save(
    endpoint: str,
) -> None:
    # The producer's own rules (HTTPS only, a host and a port) are the connector's: test_sink_options_vs_jvm.py
    assert KinesisSinkOptions(endpoint_url=endpoint).as_options() == {"kinesis.endpointUrl": endpoint}


def test_given_a_source_option_then_the_sink_refuses_it_and_names_the_source_builder() -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSinkOptions(stream_name="s", starting_position="LATEST")  # type: ignore[call-arg]
    assert str(raised.value) == (
        "starting_position (kinesis.startingPosition) is read by the source (spark.readStream) only; the sink "
        "(df.write, df.writeStream) does not read it. Give it to KinesisSourceOptions, or leave it out."
    )
    with pytest.raises(ValueError) as raised:
        KinesisSinkOptions.from_options({"kinesis.streamName": "s", "KINESIS.FAILONDATALOSS": "false"})
    assert str(raised.value) == (
        "Option kinesis.failOnDataLoss is read by the source (spark.readStream) only; the sink (df.write, "
        "df.writeStream) does not read it. Give it to KinesisSourceOptions, or leave it out."
    )


def test_given_misspelt_names_then_the_closest_option_is_named() -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSinkOptions(record_tll=60000)  # type: ignore[call-arg]
    assert str(raised.value) == (
        "Unknown option 'record_tll'. Did you mean record_ttl (kinesis.sink.recordTtl)? The accepted options are "
        "listed at https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md."
    )
    with pytest.raises(ValueError) as raised:
        KinesisSinkOptions.from_options({"kinesis.sink.recordTl": "60000"})
    assert str(raised.value) == (
        "Unknown option 'kinesis.sink.recordtl'. Did you mean kinesis.sink.recordTtl? The accepted options are "
        "listed at https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md."
    )


@pytest.mark.parametrize(
    "argument, value",
    [
        ("stream_name", 5),
        ("aggregation_enabled", "false"),
        ("record_ttl", True),
        ("max_connections", "8"),
        ("max_pending_records_per_executor", 1.5),
        ("verify_certificate", 0),
    ],
)
def test_given_a_value_of_the_wrong_python_type_then_type_error_names_the_option(argument: str, value: Any) -> None:
    with pytest.raises(TypeError) as raised:
        KinesisSinkOptions(**{argument: value})
    assert str(raised.value).startswith(f"{argument} (kinesis.")
    assert "Accepted:" in str(raised.value)


def test_given_options_that_belong_together_then_the_connector_checks_them_together(spark: Any) -> None:
    def parse(**arguments: Any) -> str:
        return parser_verdict(spark, KinesisSinkOptions(**arguments).as_options()) or ""

    assert "go together" in parse(aws_secret_key="S")
    assert "kinesis.sessionToken is set without" in parse(session_token="t")
    assert "kinesis.clientMaxRetryInterval (100ms) is smaller than" in parse(client_max_retry_interval=100)


def test_given_secrets_then_repr_never_shows_them_and_from_options_round_trips() -> None:
    options = KinesisSinkOptions(
        stream_name="s", aws_access_key_id="AKIAX", aws_secret_key="very-secret", aggregation_enabled=False
    )
    assert repr(options) == (
        "KinesisSinkOptions(stream_name='s', aws_access_key_id=<redacted>, aws_secret_key=<redacted>, "
        "aggregation_enabled='false')"
    )
    assert KinesisSinkOptions.from_options(options.as_options()) == options
    assert options != KinesisSinkOptions(stream_name="s")
    with pytest.raises(ValueError, match="'checkpointLocation' is not an option of the connector"):
        KinesisSinkOptions.from_options({"checkpointLocation": "/tmp/c"})


def test_the_docstring_examples_hold() -> None:
    result = doctest.testmod(pyspark_kinesis._sink_options, extraglobs={"KinesisSinkOptions": KinesisSinkOptions})
    assert result.failed == 0 and result.attempted > 0
