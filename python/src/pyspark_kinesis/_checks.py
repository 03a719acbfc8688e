"""The connector's option checks, interpreted from its own description of them.

The connector's options registry describes each option's check (``OptionCheck.scala``: kind, bounds, values,
grammar and the reasons it gives) and its rules across options (``OptionRule.scala``) as data in its JSON
description; the build writes them into ``_registry.py``. This module restates no bound, value or message: it
interprets that description, so a bad option fails here, before Spark starts, with the connector's own words.
What the description leaves to the connector (``connectorOnly``, a URL past its scheme, the sink's endpoint) the
connector checks once, when the DataFrame is created (``load()``, ``save()``, ``start()``).

One thing is stricter here than in the connector: it accepts (and checks, then ignores) an option of the other
side, so that one dictionary can serve a reader and a writer; the builders refuse it, since a sink option given to
a reader, or a source option to a writer, is almost always a mistake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple

#: The kinds of check (``OptionCheck.kind``) and of rule (``OptionRule.kind``) interpreted here; the generator
#: refuses a registry with any other.
CHECK_KINDS = frozenset({"nonEmpty", "oneOf", "whole", "duration", "matches", "url", "connectorOnly"})
RULE_KINDS = frozenset({"required", "together", "needs", "excludes", "notBelow", "oneWhen"})

#: What each side is called in messages, and the builder that takes its options.
SIDES = {
    "source": ("the source (spark.readStream)", "KinesisSourceOptions"),
    "sink": ("the sink (df.write, df.writeStream)", "KinesisSinkOptions"),
}


@dataclass(frozen=True)
class OptionMeta:
    """One option of the registry, as the build generated it from the connector's JSON description; ``usage``
    says which side reads it ("source", "sink" or "both") and ``check`` is its ``OptionCheck`` as JSON."""

    name: str
    argument: str
    type: str
    default: Optional[str]
    accepted: str
    secret: bool
    usage: str = "both"
    check: Mapping[str, Any] = field(default_factory=lambda: {"kind": "connectorOnly"}, hash=False)

    @property
    def key(self) -> str:
        """The case-insensitive key Spark hands options to the connector under."""
        return self.name.lower()


#: ``String.trim()`` strips every character up to U+0020 from both ends; the connector trims before checking.
_TRIMMED = "".join(chr(c) for c in range(0x21))


def value_problem(check: Mapping[str, Any], raw: str) -> Optional[str]:
    """The connector's reason for refusing ``raw`` under ``check``, or None when it passes what the description
    covers."""
    text, kind = raw.strip(_TRIMMED), check["kind"]
    if kind == "nonEmpty":
        return check["empty"] if text == "" else None
    if kind == "oneOf":
        refused = {value.lower(): why for value, why in check["refused"].items()}
        if text.lower() in refused:
            return str(refused[text.lower()])
        return None if text.lower() in (v.lower() for v in check["values"]) else check["notOne"]
    if kind == "whole":
        if not re.fullmatch(check["syntax"], text):
            return check["notWhole"]
        return None if check["min"] <= int(text) <= check["max"] else check["outside"]
    if kind == "duration":
        match = re.fullmatch(check["syntax"], text.lower())
        if not match:
            return check["notDuration"]
        ms = int(match.group(1)) * check["unitsMs"][match.group(2) or "ms"]
        return check["longer"] if ms > check["maxMs"] else None
    if kind == "matches":
        return None if re.fullmatch(check["regex"], text) else check["problem"]
    if kind == "url":
        return None if any(text.lower().startswith(p) for p in check["prefixes"]) else check["noPrefix"]
    return None  # connectorOnly


def rule_problem(
    rule: Mapping[str, Any], given: Iterable[str], number: Callable[[str], int], text: Callable[[str], Optional[str]]
) -> Optional[str]:
    """The rule's message when the options ``given`` (by name) break it; ``number`` is an option's whole value,
    given or default, and ``text`` its text (trimmed), given or default."""
    names, given = rule["options"], set(given)
    kind = rule["kind"]
    if kind == "required":
        broken = not any(n in given for n in names)
    elif kind == "together":
        broken = any(n in given for n in names) and not all(n in given for n in names)
    elif kind == "needs":
        broken = names[0] in given and not all(n in given for n in names[1:])
    elif kind == "excludes":
        broken = sum(n in given for n in names) > 1
    elif kind == "oneWhen":
        if str(text(names[0]) or "").lower() not in (v.lower() for v in rule["values"]):
            return None
        count = sum(n in given for n in names[1:])
        template = rule["message"] if count == 0 else rule["several"] if count > 1 else None
        return None if template is None else _with_values(str(template), names, text)
    else:  # notBelow
        value, floor = number(names[0]), number(names[1])
        return str(rule["message"]).format(value=value, floor=floor) if value < floor else None
    return str(rule["message"]) if broken else None


def _with_values(template: str, names: Iterable[str], text: Callable[[str], Optional[str]]) -> str:
    """``OptionRule.withValues``: each ``{<option name>}`` of the rule's options becomes that option's text."""
    names = set(names)
    return re.sub(r"\{([^{}]+)\}", lambda m: str(text(m.group(1)) or "") if m.group(1) in names else m.group(0),
                  template)


def invalid_value_message(option: OptionMeta, raw: str, problem: str) -> str:
    """``OptionSpec.parseOrFail``'s message: names the option, echoes the value (never a secret), says what
    is accepted."""
    shown = "<redacted>" if option.secret else f"'{raw}'"
    return f"Invalid value {shown} for option {option.name}: {problem}. Accepted: {option.accepted}."


def other_side_message(option: OptionMeta, side: str, what: str) -> str:
    """Why a builder of ``side`` refuses an option that only the other side reads; ``what`` names the option as
    the user gave it."""
    (other, builder) = SIDES["sink" if side == "source" else "source"]
    return f"{what} is read by {other} only; {SIDES[side][0]} does not read it. Give it to {builder}, or leave it out."


def check_options(
    registry: Tuple[OptionMeta, ...], rules: Tuple[Mapping[str, Any], ...], side: str, raw: Mapping[str, str]
) -> Dict[str, str]:
    """Checks options (keys in any case) in the connector's order (unknown names, every value in registry order,
    then the rules that apply to ``side``) and returns the ``kinesis.*`` ones under their registry names; raises
    ValueError with the connector's message at the first problem.

    ``registry`` is the whole registry, both sides: an unknown name is matched against all of it, as in the
    connector."""
    by_key = {o.key: o for o in registry}
    lowered = {k.lower(): v for k, v in raw.items()}
    for key in lowered:
        if key.startswith("kinesis.") and key not in by_key:
            suggestion = closest(registry, key, lambda o: o.key)
            raise ValueError(
                f"Unknown option '{key}'. Did you mean {suggestion.name}? The accepted options are listed in "
                "the README's options table."
            )
    for key in lowered:
        if key in by_key and by_key[key].usage not in (side, "both"):
            raise ValueError(other_side_message(by_key[key], side, f"Option {by_key[key].name}"))
    checked = {o.name: lowered[o.key] for o in registry if o.key in lowered}
    for option in registry:
        problem = value_problem(option.check, checked[option.name]) if option.name in checked else None
        if problem is not None:
            raise ValueError(invalid_value_message(option, checked[option.name], problem))
    by_name = {o.name: o for o in registry}

    def text(name: str) -> Optional[str]:
        value = checked.get(name, by_name[name].default)
        return None if value is None else str(value).strip(_TRIMMED)

    def number(name: str) -> int:
        return int(str(text(name)))

    for rule in rules:
        problem = rule_problem(rule, checked, number, text) if rule["usage"] in (side, "both") else None
        if problem is not None:
            raise ValueError(problem)
    return checked


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
