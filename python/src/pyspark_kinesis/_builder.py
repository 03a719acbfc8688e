"""What the generated option builders share: turning typed Python arguments into the connector's option text,
checking it, and showing it without secrets."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, ClassVar, Dict, Mapping, Tuple, Type, TypeVar

from ._checks import OptionMeta, check_options, closest, other_side_message

#: The Python form an option's argument takes, by option; the generator writes the type hints from it.
KIND_ANNOTATIONS = {
    "str": "str",
    "bool": "bool",
    "int": "int",
    "duration": "Union[str, int, timedelta]",
    "position": "Union[str, datetime, Mapping[str, Mapping[str, Any]]]",
}


def python_kind(option: OptionMeta) -> str:
    """The key of :data:`KIND_ANNOTATIONS` for an option."""
    if option.name == "kinesis.startingPosition":
        return "position"
    return {"boolean": "bool", "int": "int", "long": "int", "duration": "duration"}.get(option.type, "str")


def _wrong_type(option: OptionMeta, value: object, expected: str) -> TypeError:
    return TypeError(
        f"{option.argument} ({option.name}) must be {expected}, not {type(value).__name__}. "
        f"Accepted: {option.accepted}."
    )


def option_text(option: OptionMeta, value: object) -> str:
    """The option text Spark passes to the connector for a typed Python argument."""
    kind = python_kind(option)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _wrong_type(option, value, "a bool")
        return "true" if value else "false"
    if kind in ("int", "duration") and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if kind == "duration" and isinstance(value, timedelta):
        millis, rest = divmod(value, timedelta(milliseconds=1))
        if rest:
            raise ValueError(f"{option.argument} ({option.name}) must be a whole number of milliseconds, not {value}.")
        return f"{millis}ms"
    if kind == "position" and isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{option.argument} ({option.name}) got a datetime without a time zone; give it one, for example "
                "datetime(2024, 5, 1, tzinfo=timezone.utc)."
            )
        return f"AT_TIMESTAMP {value.isoformat()}"
    if kind == "position" and isinstance(value, Mapping):
        return json.dumps(dict(value))
    if kind != "int" and isinstance(value, str):
        return value
    expected = {
        "int": "an int",
        "duration": "a str, an int (milliseconds) or a timedelta",
        "position": "a str, a timezone-aware datetime or a mapping of shard id to position",
    }.get(kind, "a str")
    raise _wrong_type(option, value, expected)


B = TypeVar("B", bound="OptionsBuilder")


class OptionsBuilder:
    """Base of the generated builders: holds the checked ``kinesis.*`` options under their registry names.

    ``_REGISTRY`` is the whole registry, ``_RULES`` its rules across options, ``_SIDE`` the side ("source" or
    "sink") a builder is for and ``_OPTIONS`` the options that side reads, in registry order."""

    __slots__ = ("_options",)
    _REGISTRY: ClassVar[Tuple[OptionMeta, ...]] = ()
    _RULES: ClassVar[Tuple[Mapping[str, Any], ...]] = ()
    _SIDE: ClassVar[str] = ""
    _OPTIONS: ClassVar[Tuple[OptionMeta, ...]] = ()

    def _set(self, arguments: Mapping[str, object], unknown: Mapping[str, object]) -> None:
        for name in unknown:
            raise self._unknown_keyword(name)
        texts = {
            o.name: option_text(o, arguments[o.argument]) for o in self._OPTIONS if arguments[o.argument] is not None
        }
        self._options = check_options(self._REGISTRY, self._RULES, self._SIDE, texts)

    @classmethod
    def _unknown_keyword(cls, name: str) -> TypeError:
        other_side = next((o for o in cls._REGISTRY if o.argument == name), None)
        if other_side is not None:
            return TypeError(other_side_message(other_side, cls._SIDE, f"{name} ({other_side.name})"))
        near = closest(cls._OPTIONS, name, lambda o: o.argument)
        return TypeError(
            f"Unknown option '{name}'. Did you mean {near.argument} ({near.name})? The accepted options are listed in "
            "the README's options table."
        )

    @classmethod
    def from_options(cls: Type[B], options: Mapping[str, str]) -> B:
        """Checks options given by their connector names (``kinesis.streamName`` ..., any case), as the
        connector does, and returns them as a builder.

        :raises ValueError: with the connector's message, for an unknown ``kinesis.*`` name, a bad value, or an
            option that is not a ``kinesis.*`` one; and for an option only the other side (source or sink) reads.

        >>> KinesisSourceOptions.from_options({"kinesis.streamName": "orders"}).as_options()
        {'kinesis.streamName': 'orders'}
        """
        for key, value in options.items():
            if not key.lower().startswith("kinesis."):
                raise ValueError(f"'{key}' is not a kinesis.* option; give it to Spark's reader or writer separately.")
            if not isinstance(value, str):
                raise TypeError(f"The value of {key} must be a str, not {type(value).__name__}.")
        builder = cls.__new__(cls)
        builder._options = check_options(cls._REGISTRY, cls._RULES, cls._SIDE, options)
        return builder

    def as_options(self) -> Dict[str, str]:
        """The options for Spark's reader or writer, by their exact ``kinesis.*`` names; only those that were
        given (the connector applies the defaults)."""
        return dict(self._options)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._options == self._options

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._options.items())))

    def __repr__(self) -> str:
        by_name = {o.name: o for o in self._OPTIONS}
        shown = ", ".join(
            f"{by_name[name].argument}={'<redacted>' if by_name[name].secret else repr(text)}"
            for name, text in self._options.items()
        )
        return f"{type(self).__name__}({shown})"

