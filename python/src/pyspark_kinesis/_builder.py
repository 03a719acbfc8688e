"""What the generated option builders share: turning typed Python arguments into the connector's option text,
checking what is pure data, and showing options without secrets."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import ClassVar, Dict, Mapping, Tuple, Type, TypeVar

from ._checks import OptionMeta, data_problem, invalid_value_message, other_side_message, unknown_message

#: The Python values an option of each registry type takes, as named in TypeError messages; other types take a str.
EXPECTED = {
    "boolean": "a bool",
    "int": "an int",
    "long": "an int",
    "duration": "a str, an int (in the option's bare unit) or a timedelta",
    "position": "a str, a timezone-aware datetime or a mapping of shard id to position",
    "tags": "a str (a JSON object) or a mapping of tag keys to values",
}


def _wrong_type(option: OptionMeta, value: object) -> TypeError:
    return TypeError(
        f"{option.argument} ({option.name}) must be {EXPECTED.get(option.type, 'a str')}, not "
        f"{type(value).__name__}. Accepted: {option.accepted}."
    )


def option_text(option: OptionMeta, value: object) -> str:
    """The option text Spark passes to the connector for a typed Python argument; raises TypeError for a value of
    the wrong type, and ValueError with the connector's message when the option's pure data refuses it."""
    kind, is_int = option.type, isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean" and isinstance(value, bool):
        text = "true" if value else "false"
    elif kind in ("int", "long", "duration") and is_int:
        text = str(value)
    elif kind == "duration" and isinstance(value, timedelta):
        millis, rest = divmod(value, timedelta(milliseconds=1))
        if rest:
            raise ValueError(f"{option.argument} ({option.name}) must be a whole number of milliseconds, not {value}.")
        text = f"{millis}ms"
    elif kind == "position" and isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{option.argument} ({option.name}) got a datetime without a time zone; give it one, for example "
                "datetime(2024, 5, 1, tzinfo=timezone.utc)."
            )
        text = f"AT_TIMESTAMP {value.isoformat()}"
    elif kind in ("position", "tags") and isinstance(value, Mapping):
        text = json.dumps(dict(value))
    elif kind not in ("boolean", "int", "long") and isinstance(value, str):
        text = value
    else:
        raise _wrong_type(option, value)
    problem = data_problem(option, value if is_int else text)
    if problem is not None:
        raise ValueError(invalid_value_message(option, text, problem))
    return text


B = TypeVar("B", bound="OptionsBuilder")


class OptionsBuilder:
    """Base of the generated builders: holds the ``kinesis.*`` options given, under their registry names (or, from
    :meth:`from_options`, an alias' own spelling, which the connector resolves).

    ``_REGISTRY`` is the whole registry, ``_ALIASES`` every other spelling the connector accepts, ``_SIDE`` the side
    ("source" or "sink") a builder is for and ``_OPTIONS`` the options that side reads, in registry order."""

    __slots__ = ("_options",)
    _REGISTRY: ClassVar[Tuple[OptionMeta, ...]] = ()
    _ALIASES: ClassVar[Tuple[str, ...]] = ()
    _SIDE: ClassVar[str] = ""
    _OPTIONS: ClassVar[Tuple[OptionMeta, ...]] = ()

    def _set(self, arguments: Mapping[str, object], unknown: Mapping[str, object]) -> None:
        for name in unknown:
            raise self._unknown_keyword(name)
        self._options = {
            o.name: option_text(o, arguments[o.argument]) for o in self._OPTIONS if arguments[o.argument] is not None
        }

    @classmethod
    def _unknown_keyword(cls, name: str) -> TypeError:
        other_side = next((o for o in cls._REGISTRY if o.argument == name), None)
        if other_side is not None:
            return TypeError(other_side_message(other_side, cls._SIDE, f"{name} ({other_side.name})"))
        by_argument = {o.argument: o for o in cls._OPTIONS}
        return TypeError(unknown_message(name, by_argument, lambda a: f"{a} ({by_argument[a].name})"))

    @classmethod
    def from_options(cls: Type[B], options: Mapping[str, str]) -> B:
        """Takes options by the names the connector accepts (``kinesis.streamName`` ..., any case, and the other
        spellings it reads, such as ``kinesis.kinesisRegion``) and returns them as a builder. Values are checked
        here only as pure data (an enum's members); the connector checks the rest when the DataFrame is created.

        :raises ValueError: with the connector's message, for an unknown ``kinesis.*`` name or a value outside an
            enum; for a name the connector does not read at all; and for an option only the other side reads.

        >>> KinesisSourceOptions.from_options({"kinesis.streamName": "orders"}).as_options()
        {'kinesis.streamName': 'orders'}
        """
        by_key = {o.key: o for o in cls._REGISTRY}
        aliases = {a.lower(): a for a in cls._ALIASES}
        checked: Dict[str, str] = {}
        for key, value in options.items():
            if not isinstance(value, str):
                raise TypeError(f"The value of {key} must be a str, not {type(value).__name__}.")
            option = by_key.get(key.lower())
            if option is None and key.lower() in aliases:
                checked[aliases[key.lower()]] = value
            elif option is None and key.lower().startswith("kinesis."):
                known = [o.name for o in cls._REGISTRY] + [a for a in cls._ALIASES if a.startswith("kinesis.")]
                raise ValueError(unknown_message(key.lower(), known))
            elif option is None:
                raise ValueError(
                    f"'{key}' is not an option of the connector; give it to Spark's reader or writer separately."
                )
            elif option.usage not in (cls._SIDE, "both"):
                raise ValueError(other_side_message(option, cls._SIDE, f"Option {option.name}"))
            else:
                problem = data_problem(option, value)
                if problem is not None:
                    raise ValueError(invalid_value_message(option, value, problem))
                checked[option.name] = value
        builder = cls.__new__(cls)
        builder._options = checked
        return builder

    def as_options(self) -> Dict[str, str]:
        """The options for Spark's reader or writer, by their exact names; only those that were given (the
        connector applies the defaults)."""
        return dict(self._options)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._options == self._options

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._options.items())))

    def __repr__(self) -> str:
        by_name = {o.name: o for o in self._OPTIONS}
        shown = ", ".join(
            f"{by_name[name].argument}={'<redacted>' if by_name[name].secret else repr(text)}"
            if name in by_name
            else f"{name!r}=<as given>"
            for name, text in self._options.items()
        )
        return f"{type(self).__name__}({shown})"
