"""The connector's option checks, ported from its Scala options registry so that a bad option fails in Python,
before Spark starts, with the message the JVM would give.

The option list itself (names, types, defaults, accepted values) is never written here: it is generated from
the registry's JSON description into ``_registry.py``. What lives here is the behaviour of each option *type*
(``OptionSpec.scala``'s ``Parsers``) and the few options whose check is their own (stream name, region, consumer
type, starting position); ``_parse.py`` puts them together as the connector's source and sink do. The test
suite runs the JVM parser on the same values and compares the messages.
"""

from __future__ import annotations

import calendar
import json
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Optional, Tuple, Union

from ._java_uri import java_uri_problem

#: A check returns None when the (trimmed) text is accepted, else the reason it is not.
Check = Callable[[str], Optional[str]]


@dataclass(frozen=True)
class OptionMeta:
    """One option of the registry, as the build generated it from the connector's JSON description; ``usage``
    says which side reads it: "source", "sink" or "both"."""

    name: str
    argument: str
    type: str
    default: Optional[str]
    accepted: str
    secret: bool
    minimum: Optional[str] = None
    maximum: Optional[str] = None
    values: Tuple[str, ...] = ()
    usage: str = "both"

    @property
    def key(self) -> str:
        """The case-insensitive key Spark hands options to the connector under."""
        return self.name.lower()


# --- Java string semantics the checks rely on ---------------------------------------------------------------

_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))


def java_trim(text: str) -> str:
    """``String.trim()``: strips every character up to U+0020 from both ends."""
    return text.strip(_JAVA_TRIMMED)


def java_long(text: str) -> Optional[int]:
    """``java.lang.Long.parseLong``: an optional sign and decimal digits, within 64 bits; None otherwise."""
    if not re.fullmatch(r"[+-]?\d+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


# --- checks by type (OptionSpec.scala, Parsers) --------------------------------------------------------------


def _string(text: str) -> Optional[str]:
    return "the value is empty" if text == "" else None


def _boolean(text: str) -> Optional[str]:
    return None if text.lower() in ("true", "false") else "it is not a boolean"


def _whole_number(minimum: int, maximum: int) -> Check:
    def check(text: str) -> Optional[str]:
        value = java_long(text)
        if value is None:
            return "it is not a whole number"
        if value < minimum or value > maximum:
            return f"it is outside {minimum}..{maximum}"
        return None

    return check


_DURATION = re.compile(r"(\d+)\s*(ms|s|m|min|h)?", re.ASCII)
_DURATION_FACTORS = {None: 1, "ms": 1, "s": 1000, "m": 60000, "min": 60000, "h": 3600000}


def duration_ms(text: str) -> Union[int, str]:
    """A duration such as ``500ms``, ``1s``, ``2m`` or ``1h`` in milliseconds (a bare number is milliseconds),
    or the reason it is not one."""
    match = _DURATION.fullmatch(text.lower())
    if not match:
        return "it is not a duration"
    amount = int(match.group(1))
    if amount >= 2**63:
        return "it is too large"
    value = amount * _DURATION_FACTORS[match.group(2)]
    return "it is too large" if value >= 2**63 else value


def _duration(maximum: str) -> Check:
    limit = duration_ms(maximum)
    assert isinstance(limit, int), f"the registry's maximum duration {maximum!r} is not a duration"

    def check(text: str) -> Optional[str]:
        value = duration_ms(text)
        if isinstance(value, str):
            return value
        return f"it is longer than {maximum}" if value > limit else None

    return check


def _enum(values: Tuple[str, ...]) -> Check:
    def check(text: str) -> Optional[str]:
        if any(text.lower() == v.lower() for v in values):
            return None
        return "it is not one of the accepted values"

    return check


def _url(text: str) -> Optional[str]:
    return java_uri_problem(text)


# --- checks of single options (KinesisOptionsRegistry.scala) -------------------------------------------------


def _stream_name(text: str) -> Optional[str]:
    return None if re.fullmatch(r"[a-zA-Z0-9_.-]{1,128}", text) else "it is not a valid stream name"


def _region(text: str) -> Optional[str]:
    return None if re.fullmatch(r"[a-z]{2}(-[a-z]+)+-[0-9]+", text) else "it is not an AWS region name"


def _consumer_type(values: Tuple[str, ...]) -> Check:
    def check(text: str) -> Optional[str]:
        if text.lower() == "subscribetoshard":
            return "enhanced fan-out (SubscribeToShard) is not supported by this version yet; use GetRecords"
        return _enum(values)(text)

    return check


# --- kinesis.startingPosition (StartingPosition.scala) -------------------------------------------------------

_INSTANT = re.compile(
    r"(\d{4}|-\d{4,10}|\+\d{5,10})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{0,9})?)?"
    r"(?:[Zz]|[+-](\d{2})(?::(\d{2})(?::(\d{2}))?)?)",
    re.ASCII,
)


def _is_instant(text: str) -> bool:
    """What ``Instant.parse`` or, failing that, ``OffsetDateTime.parse`` accepts: an ISO-8601 date and time with
    seconds optional, up to nine fraction digits and an offset (Z, +HH, +HH:MM or +HH:MM:SS, at most 18 hours);
    Instant.parse alone also takes 24:00:00 and a leap second 23:59:60."""
    match = _INSTANT.fullmatch(text)
    if not match:
        return False
    year, month, day, hour, minute = (int(g) for g in match.groups()[:5])
    second, fraction = match.group(6), (match.group(7) or ".").strip(".0")
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(2000 + year % 400, month)[1]:
        return False
    end_of_day = (hour, minute, second) == (24, 0, "00") and not fraction
    leap_second = (hour, minute, second) == (23, 59, "60")
    if not (end_of_day or leap_second) and (hour > 23 or minute > 59 or int(second or 0) > 59):
        return False
    hours, minutes, seconds = (int(g or 0) for g in match.groups()[7:])
    return minutes <= 59 and seconds <= 59 and hours * 3600 + minutes * 60 + seconds <= 18 * 3600


def _instant_problem(text: str) -> Optional[str]:
    if _is_instant(text):
        return None
    return f"'{text}' is not an ISO-8601 instant such as 2024-05-01T12:00:00Z"


def _json_text(node: object) -> str:
    """Jackson's ``JsonNode.asText()``: a value's text, "" for an object or an array."""
    if isinstance(node, bool):
        return "true" if node else "false"
    if node is None:
        return "null"
    if isinstance(node, (dict, list)):
        return ""
    return str(node)


def _reject_constant(name: str) -> object:
    raise ValueError(f"Non-standard token '{name}'")


def _per_shard(text: str) -> Optional[str]:
    what = "kinesis.startingPosition"
    try:
        node, _ = json.JSONDecoder(parse_constant=_reject_constant).raw_decode(text)
    except ValueError as e:
        # Jackson words its reason differently; the part before the parenthesis is the connector's.
        return f"Cannot read {what}: it is not valid JSON ({e})"
    if not isinstance(node, dict):
        return "the JSON is not an object of shard id to position"
    named = 0
    for shard_id, spec in node.items():
        if shard_id == "metadata":
            continue
        named += 1
        kind_node = spec.get("iteratorType") if isinstance(spec, dict) else None
        if kind_node is None:
            return f"Cannot read {what} for {shard_id}: field 'iteratorType' is missing"
        kind = _json_text(kind_node).upper()
        position = spec.get("iteratorPosition", ...)
        argument = None if position is ... else _json_text(position)
        if kind in ("LATEST", "TRIM_HORIZON", "EARLIEST"):
            continue
        if kind not in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP"):
            return (
                f"shard {shard_id}: iteratorType '{kind}' is not one of AT_SEQUENCE_NUMBER, "
                "AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP, TRIM_HORIZON, LATEST"
            )
        if argument is None:
            return f"shard {shard_id}: {kind} needs an iteratorPosition"
        if kind == "AT_TIMESTAMP":
            if all(c.isdecimal() for c in argument):
                if java_long(argument) is None:
                    return f'For input string: "{argument}"'
            elif not _is_instant(argument):
                return f"shard {shard_id}: {_instant_problem(argument)}"
        elif not (0 < len(argument) <= 128 and all("0" <= c <= "9" for c in argument)):
            return f"shard {shard_id}: '{argument}' is not a sequence number"
    return None if named else "the JSON names no shard"


def _starting_position(text: str) -> Optional[str]:
    upper = text.upper()
    if upper in ("LATEST", "TRIM_HORIZON", "EARLIEST"):
        return None
    if upper.startswith("AT_TIMESTAMP"):
        return _instant_problem(java_trim(text[len("AT_TIMESTAMP") :]))
    if text.startswith("{"):
        return _per_shard(text)
    return "it is not a known starting position"


# --- putting it together -----------------------------------------------------------------------------------

_BY_NAME: Dict[str, Callable[[OptionMeta], Check]] = {
    "kinesis.streamName": lambda o: _stream_name,
    "kinesis.region": lambda o: _region,
    "kinesis.consumerType": lambda o: _consumer_type(o.values),
    "kinesis.startingPosition": lambda o: _starting_position,
}

_BY_TYPE: Dict[str, Callable[[OptionMeta], Check]] = {
    "string": lambda o: _string,
    "url": lambda o: _url,
    "enum": lambda o: _enum(o.values),
    "boolean": lambda o: _boolean,
    "long": lambda o: _whole_number(int(o.minimum or 0), int(o.maximum or 0)),
    "int": lambda o: _whole_number(int(o.minimum or 0), int(o.maximum or 0)),
    "duration": lambda o: _duration(o.maximum or ""),
}

#: The option types this module can check; the generator refuses a registry with any other.
KNOWN_TYPES = frozenset(_BY_TYPE)


def check_for(option: OptionMeta) -> Check:
    """The check of one option: its own when it has one, else its type's."""
    return _BY_NAME.get(option.name, _BY_TYPE[option.type])(option)


def invalid_value_message(option: OptionMeta, raw: str, problem: str) -> str:
    """``OptionSpec.parseOrFail``'s message: names the option, echoes the value (never a secret), says what
    is accepted."""
    shown = "<redacted>" if option.secret else f"'{raw}'"
    return f"Invalid value {shown} for option {option.name}: {problem}. Accepted: {option.accepted}."


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            above = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = above
    return row[len(b)]


def closest(options: Iterable[OptionMeta], unknown: str, key: Callable[[OptionMeta], str]) -> OptionMeta:
    """The option whose ``key`` is nearest to ``unknown`` by edit distance (the first such in registry order)."""
    return min(options, key=lambda o: _edit_distance(key(o), unknown))
