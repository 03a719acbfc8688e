"""The connector's options parsers, ``KinesisSourceOptions.parse`` and ``KinesisSinkOptions.parse``, in Python:
unknown names, the required stream, each option's own check (``_checks.py``) and the rules across options.

One thing is stricter here than in the connector: the connector accepts (and checks, then ignores) an option of
the other side, so that one dictionary can serve a reader and a writer; the Python builders refuse it, since a
sink option given to a reader, or a source option to a writer, is almost always a mistake.
"""

from __future__ import annotations

from typing import Dict, Mapping, Tuple

from ._checks import OptionMeta, check_for, closest, invalid_value_message, java_long, java_trim
from ._java_uri import java_uri_parts

#: What each side is called in messages, and the builder that takes its options.
SIDES = {
    "source": ("the source (spark.readStream)", "KinesisSourceOptions"),
    "sink": ("the sink (df.write, df.writeStream)", "KinesisSinkOptions"),
}


def reads(option: OptionMeta, side: str) -> bool:
    """Whether ``side`` ("source" or "sink") reads ``option``."""
    return option.usage in (side, "both")


def other_side_message(option: OptionMeta, side: str, what: str) -> str:
    """Why a builder of ``side`` refuses an option that only the other side reads; ``what`` names the option as
    the user gave it."""
    (other, builder) = SIDES["sink" if side == "source" else "source"]
    return f"{what} is read by {other} only; {SIDES[side][0]} does not read it. Give it to {builder}, or leave it out."


def check_options(registry: Tuple[OptionMeta, ...], side: str, raw: Mapping[str, str]) -> Dict[str, str]:
    """Checks options (keys in any case) as the connector's parser of ``side`` does and returns the ``kinesis.*``
    ones under their registry names; raises ValueError with the connector's message at the first problem.

    ``registry`` is the whole registry, both sides: an unknown name is matched against all of it, as in the
    connector. With one problem the message is the JVM's; with several, the one reported first may differ."""
    by_key = {o.key: o for o in registry}
    lowered = {k.lower(): (k, v) for k, v in raw.items()}
    for key in lowered:
        if key.startswith("kinesis.") and key not in by_key:
            suggestion = closest(registry, key, lambda o: o.key)
            raise ValueError(
                f"Unknown option '{key}'. Did you mean {suggestion.name}? The accepted options are listed in "
                "the README's options table."
            )
    for key in lowered:
        if key in by_key and not reads(by_key[key], side):
            raise ValueError(other_side_message(by_key[key], side, f"Option {by_key[key].name}"))
    stream = by_key["kinesis.streamname"]
    if side == "source" and stream.key not in lowered:
        raise ValueError(
            f"Option {stream.name} is required: set it to the name of the Kinesis stream to read, for example "
            f'.option("{stream.name}", "my-stream").'
        )
    checked: Dict[str, str] = {}
    for option in registry:
        if option.key in lowered:
            value = lowered[option.key][1]
            problem = check_for(option)(java_trim(value))
            if problem is not None:
                raise ValueError(invalid_value_message(option, value, problem))
            checked[option.name] = value
    _check_client(registry, checked)
    if side == "sink" and "kinesis.endpointUrl" in checked:
        _check_producer_endpoint(java_trim(checked["kinesis.endpointUrl"]))
    return checked


def _check_client(registry: Tuple[OptionMeta, ...], checked: Mapping[str, str]) -> None:
    """The rules that tie the options both sides share together (``OptionValues.clientSettings``)."""
    by_name = {o.name: o for o in registry}

    def number(name: str) -> int:
        text = checked.get(name, by_name[name].default)
        value = java_long(java_trim(text or ""))
        assert value is not None, f"{name} was checked, or its default is a number"
        return value

    base, most = "kinesis.clientRetryIntervalsMs", "kinesis.clientMaxRetryIntervalMs"
    if number(most) < number(base):
        raise ValueError(
            f"Option {most} ({number(most)}) is smaller than {base} ({number(base)}): make the maximum at least "
            "the base interval."
        )
    key_id, secret, token = "kinesis.awsAccessKeyId", "kinesis.awsSecretKey", "kinesis.sessionToken"
    if (key_id in checked) != (secret in checked):
        raise ValueError(
            f"Options {key_id} and {secret} go together: set both, or neither to use the default credentials "
            "chain (environment, profile, instance or container role)."
        )
    if token in checked and key_id not in checked:
        raise ValueError(
            f"Option {token} is set without {key_id} and {secret}: give all three for temporary credentials, or "
            "none to use the default credentials chain."
        )


def _check_producer_endpoint(endpoint: str) -> None:
    """``KinesisSinkOptions.checkProducerEndpoint``: the KPL reaches Kinesis over HTTPS at a host and a port."""
    scheme, path, query = java_uri_parts(endpoint)
    if scheme.lower() != "https":
        raise ValueError(
            f"Invalid value '{endpoint}' for option kinesis.endpointUrl: the sink writes through the Kinesis Producer "
            "Library, which speaks HTTPS only. Use the https:// endpoint (for kinesis-mock or LocalStack, the TLS "
            "port, e.g. https://127.0.0.1:4567, with kinesis.verifyCertificate=false for its self-signed "
            "certificate)."
        )
    if (path is not None and path not in ("", "/")) or query is not None:
        raise ValueError(
            f"Invalid value '{endpoint}' for option kinesis.endpointUrl: the sink's producer takes a host and a port "
            "only; remove the path and query."
        )
