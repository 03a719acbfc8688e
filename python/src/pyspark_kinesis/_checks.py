"""What Python checks of an option before Spark starts: only pure data the connector's registry hands over (an
enum's members, a whole number's range, which names exist and which side reads them). Every other check (a stream
name's grammar, a URL, a starting position, the rules across options) is the connector's, when the DataFrame is
created (``load()``, ``save()``, ``start()``), as with Spark's Kafka source.

One thing is stricter here than in the connector: a builder refuses an option only the other side reads, since a
sink option given to a reader, or a source option to a writer, is almost always a mistake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

#: What each side is called in messages, and the builder that takes its options.
SIDES = {
    "source": ("the source (spark.readStream)", "KinesisSourceOptions"),
    "sink": ("the sink (df.write, df.writeStream)", "KinesisSinkOptions"),
}


@dataclass(frozen=True)
class OptionMeta:
    """One option of the registry, as the build generated it from the connector's JSON description: ``usage``
    says which side reads it ("source", "sink" or "both"); ``data`` is what its parser checks that is pure data
    (``values`` of an enum, ``min`` and ``max`` of a whole number) and the ``problem`` it names."""

    name: str
    argument: str
    type: str
    default: Optional[str]
    accepted: str
    secret: bool
    usage: str = "both"
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def key(self) -> str:
        """The case-insensitive key Spark hands options to the connector under."""
        return self.name.lower()


def data_problem(option: OptionMeta, value: object) -> Optional[str]:
    """The connector's reason for refusing ``value`` (option text, or an int) by the option's pure data, or None
    when that data does not refuse it; the connector checks the rest."""
    data = option.data
    if "values" in data and isinstance(value, str):
        return None if value.strip().lower() in (v.lower() for v in data["values"]) else str(data["problem"])
    if "min" in data and isinstance(value, int) and not isinstance(value, bool):
        return None if data["min"] <= value <= data["max"] else str(data["problem"])
    return None


def invalid_value_message(option: OptionMeta, raw: object, problem: str) -> str:
    """The connector's message for a refused value: names the option, echoes the value (never a secret), says what
    is accepted."""
    shown = "<redacted>" if option.secret else f"'{raw}'"
    return f"Invalid value {shown} for option {option.name}: {problem}. Accepted: {option.accepted}."


def other_side_message(option: OptionMeta, side: str, what: str) -> str:
    """Why a builder of ``side`` refuses an option that only the other side reads; ``what`` names the option as
    the user gave it."""
    (other, builder) = SIDES["sink" if side == "source" else "source"]
    return f"{what} is read by {other} only; {SIDES[side][0]} does not read it. Give it to {builder}, or leave it out."


def unknown_message(given: str, known: Iterable[str], shown: Callable[[str], str] = str) -> str:
    """The connector's message for an unknown option, naming the nearest of ``known`` by edit distance."""
    near = min(known, key=lambda name: _edit_distance(name.lower(), given.lower()))
    return (
        f"Unknown option '{given}'. Did you mean {shown(near)}? The accepted options are listed at "
        "https://github.com/spark-kinesis/spark-kinesis/blob/main/docs/options.md."
    )


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            above = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = above
    return row[len(b)]
