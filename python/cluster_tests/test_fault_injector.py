"""The fault injector on its own (no Spark): replayable by seed, AWS-shaped throttles for a JSON client, outages.
(The Java SDK's view of its CBOR throttles is checked by the Scala suite FaultInjectorSuite.)"""

from __future__ import annotations

import socket
from typing import Iterator, List

import botocore.exceptions
import pytest
from fault_injector import FaultInjector, cbor_text_map
from harness import kinesis_client, wait_for

from pyspark_kinesis._emulator import KinesisMock


@pytest.fixture(scope="module")
def emulator() -> Iterator[KinesisMock]:
    mock = KinesisMock()
    mock.start()
    yield mock
    mock.stop()


def outcomes(injector: FaultInjector, calls: int) -> List[str]:
    client = kinesis_client(injector.endpoint)
    seen = []
    for _ in range(calls):
        try:
            client.list_streams()
            seen.append("ok")
        except botocore.exceptions.ClientError as e:
            seen.append(e.response["Error"]["Code"])
        except botocore.exceptions.BotoCoreError as e:
            seen.append(type(e).__name__)
    return seen


def test_given_a_map_when_encoded_as_cbor_then_the_bytes_follow_rfc_8949() -> None:
    assert cbor_text_map({"a": "bc"}) == bytes([0xA1, 0x61]) + b"a" + bytes([0x62]) + b"bc"
    long_text = "x" * 30
    assert cbor_text_map({"m": long_text})[3:5] == bytes([0x78, 30])


def test_given_the_same_seed_when_replayed_then_the_same_requests_get_the_same_faults(emulator: KinesisMock) -> None:
    # Given two injectors with one seed and one with another, each with background faults on every kind
    def run(seed: int) -> List[str]:
        with FaultInjector(emulator.port, seed, p_burst=0.1, p_drop=0.1, p_slow=0.05, slow_seconds=0.05) as injector:
            return outcomes(injector, 60)

    # When each serves the same 60 calls
    first, again, other = run(7), run(7), run(8)
    # Then the same seed replays the same faults, another seed differs, and faults of several kinds happened
    assert first == again
    assert first != other
    assert {"ok", "InternalFailure"} <= set(first) or {"ok", "ServiceUnavailable"} <= set(first)


def test_given_a_storm_when_a_json_client_calls_then_it_sees_aws_throttling_errors(emulator: KinesisMock) -> None:
    with FaultInjector(emulator.port, seed=3) as injector:
        # Given a storm that throttles every call
        injector.storm(1.0, 60)
        client = kinesis_client(injector.endpoint)
        # When a control call and a read are made, Then each is refused with the error AWS gives it
        with pytest.raises(botocore.exceptions.ClientError) as listing:
            client.list_shards(StreamName="any")
        assert listing.value.response["Error"]["Code"] == "LimitExceededException"
        assert listing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        with pytest.raises(botocore.exceptions.ClientError) as read:
            client.get_records(ShardIterator="AAAA")
        assert read.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
        assert injector.counts["throttle"] == 2


def test_given_an_outage_when_it_ends_then_connections_are_refused_during_it_and_served_after(
    emulator: KinesisMock,
) -> None:
    with FaultInjector(emulator.port, seed=4) as injector:
        # Given an injector that served a call
        assert outcomes(injector, 1) == ["ok"]
        # When an outage of 2 s begins
        injector.outage(2.0)
        # Then a new connection is refused at once, and calls are served again once it is over
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", injector.port), timeout=1).close()
        wait_for(lambda: outcomes(injector, 1) == ["ok"], 10, "the injector to serve again after the outage")
        assert injector.counts["outage"] == 1
