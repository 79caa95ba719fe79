"""Command-line flags derived from a config dataclass's fields, so a flag's type, default, choices and help
are the field's and cannot drift from it (the train recipe mirrors the same dataclasses; issue #29).

    VERIFIER = Flags(VerifierConfig, ("backends", "timeout_ms", "workers", "truth_table"))
    VERIFIER.add(parser)                      # --backends, --timeout-ms, --workers, --truth-table/--no-truth-table
    VerifierConfig(**VERIFIER.kwargs(args))   # the fields back, those left at "unset" omitted

A field `name` becomes `--kebab-name` with dest `name` (or the flag and dest given in `names`); its type comes
from the annotation (`int | None` is int, a tuple of str a comma list); a bool is `--x/--no-x`; a field with a
`default_factory` (a default computed on the machine) gets the flag default None and is left to the factory
when not given. Choices come from the field's `choices` metadata, or `choices` here for a command that offers
fewer. Each action carries `config_field` ((class, field name)), which `tests/test_config_flags.py` reads to check
that every command's bound flags show their field's default and help.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Flags:
    """The flags of some fields of one config dataclass, and the way back from parsed args to its keywords."""

    cls: type
    fields: tuple[str, ...]
    names: Mapping[str, str] = field(default_factory=dict)  # field -> flag ("mode" -> "--reward": dest reward)
    choices: Mapping[str, Sequence[Any]] = field(default_factory=dict)  # field -> the choices this command offers
    notes: Mapping[str, str] = field(default_factory=dict)  # field -> a sentence about this command, after the help
    metavars: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, type] = field(default_factory=dict)  # field -> argparse type, read as is (a command line)

    def flag(self, name: str) -> str:
        return self.names.get(name, "--" + name.replace("_", "-"))

    def dest(self, name: str) -> str:
        return self.flag(name).lstrip("-").replace("-", "_")

    def add(self, parser: Any, defaults: Mapping[str, Any] | None = None) -> None:
        """Add the flags to `parser` (a parser or an argument group). `defaults`: field -> this command's own
        default where it differs from the field's (`prosfi search` checks with a 50 ms verifier budget); the
        help then shows it."""
        fields = {f.name: f for f in dataclasses.fields(self.cls)}
        hints = typing.get_type_hints(self.cls)
        for name in self.fields:
            f = fields[name]
            kind, listed = self._type(name, hints[name])
            default = field_default(f)
            if defaults and name in defaults:
                default = defaults[name]
            if listed and isinstance(default, (tuple, list)):
                default = ",".join(map(str, default))
            choices = self.choices.get(name, f.metadata.get("choices"))
            text = help_text(f, self.notes.get(name))
            kwargs: dict[str, Any] = {"dest": self.dest(name), "default": default, "help": text}
            if kind is bool:
                action = parser.add_argument(self.flag(name), action=argparse.BooleanOptionalAction, **kwargs)
            else:
                action = parser.add_argument(self.flag(name), type=kind, choices=choices,
                                             metavar=self.metavars.get(name), **kwargs)
            action.config_field = (self.cls, name)  # type: ignore[attr-defined]

    def kwargs(self, args: argparse.Namespace) -> dict[str, Any]:
        """The dataclass keywords of the flags: a comma list becomes a tuple; a flag left at None is omitted
        where the field's default is not None (a machine-dependent default, or "unset: the documented one")."""
        fields = {f.name: f for f in dataclasses.fields(self.cls)}
        hints = typing.get_type_hints(self.cls)
        out: dict[str, Any] = {}
        for name in self.fields:
            value = getattr(args, self.dest(name), None)
            if value is None and fields[name].default is not None:  # a factory's, or a non-None default
                continue
            if self._type(name, hints[name])[1] and isinstance(value, str):
                value = tuple(v.strip() for v in value.split(",") if v.strip())
            out[name] = value
        return out

    def _type(self, name: str, hint: Any) -> tuple[type, bool]:
        return (self.types[name], False) if name in self.types else _scalar(hint)


def field_default(f: dataclasses.Field) -> Any:
    """A field's default as a flag's (None for a `default_factory`: computed when the dataclass is built)."""
    return None if f.default is dataclasses.MISSING else f.default


def help_text(f: dataclasses.Field, note: str | None = None) -> str:
    """The field's help (with `note` after it) and its default, escaped for argparse."""
    text = f.metadata.get("help", "").replace("%", "%%")
    if note:
        text = f"{text} {note}" if text else note
    if "default" not in text.lower():
        text += " (default: %(default)s)"
    return text


def _scalar(tp: Any) -> tuple[type, bool]:
    """(the argparse type, whether it is a comma list) of an annotation: `int | None` -> int, tuple[str, ...]
    -> (str, True), Literal[...] -> str."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _scalar(args[0])
    if origin in (tuple, list):
        return str, True
    if origin is typing.Literal:
        return type(typing.get_args(tp)[0]), False
    if tp in (int, float, str, bool):
        return tp, False
    raise TypeError(f"no flag for a field of type {tp!r}")


def bound_actions(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    """(subcommand path, action) for every flag bound to a config field, sub-commands' parsers included."""
    out = []
    for action in parser._actions:
        if getattr(action, "config_field", None):
            out.append((parser.prog, action))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += bound_actions(sub)
    return out


__all__ = ["Flags", "bound_actions", "field_default", "help_text"]
