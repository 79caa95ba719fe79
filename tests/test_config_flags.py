"""Every command's flags that set a config field are derived from that field (prosfi.configflags): they show
its default and its help, offer no choice it refuses, and read back into the dataclass. A flag re-declared by
hand (issue #29: help texts and defaults that drifted) fails `test_the_config_flags_are_bound`."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from dataclasses import dataclass, field

import pytest

from prosfi.cli import COMMANDS
from prosfi.configflags import Flags, bound_actions

VERIFIER = {"backends", "timeout_ms", "workers", "truth_table", "herbrand", "lean_project", "lean_workers",
            "lean_repl_command"}
QUANTITY_RULES = {"quantity_max_ops", "quantity_rel_tol", "quantity_trials"}
GENERATION = {"n", "temperature", "top_p", "max_new_tokens", "seed", "batch_size", "concurrency", "retries",
              "request_timeout"}
# command (its parser's prog) -> the dests that must be bound to a config field
BOUND = {
    "prosfi check": VERIFIER | {"rel_tol", "sigfigs"},
    "prosfi score": VERIFIER | QUANTITY_RULES | {"reward", "max_dependencies", "max_steps", "uncertain"},
    "prosfi eval": VERIFIER | QUANTITY_RULES | GENERATION | {"reward"},
    "prosfi serve": VERIFIER | {"host", "port", "token", "max_batch", "max_queue", "queue_timeout_s", "passes",
                                "spare_workers", "reward"},
    "prosfi search": VERIFIER | {"beams", "candidates", "max_steps", "mode", "retries", "seed"},
    "prosfi prm label": VERIFIER | QUANTITY_RULES | GENERATION,
    "prosfi prm score": VERIFIER | GENERATION,
    "prosfi model tiny": {"vocab_size", "hidden_size", "tie_word_embeddings", "corpus", "seed"},
}
# (command, dest) -> a command's own default, where it differs from the field's on purpose
OWN_DEFAULTS = {("prosfi search", "timeout_ms"): 50}  # NS-PRM's verifier budget per call


def _parsers() -> dict[str, argparse.ArgumentParser]:
    out = {}
    for name, (module, help_text) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"prosfi {name}", description=help_text)
        importlib.import_module(module).add_arguments(parser)
        out[name] = parser
    return out


@pytest.fixture(scope="module")
def parsers():
    return _parsers()


def _expected_default(f: dataclasses.Field):
    if f.default is dataclasses.MISSING:
        return None  # a default_factory's value is computed on the machine: the flag leaves it to the factory
    return ",".join(f.default) if isinstance(f.default, tuple) else f.default


def test_every_bound_flag_shows_its_fields_default_and_help(parsers):
    seen = 0
    for parser in parsers.values():
        parser.format_help()  # a `%` in a field's help would break --help
        for prog, action in bound_actions(parser):
            cls, name = action.config_field
            f = {x.name: x for x in dataclasses.fields(cls)}[name]
            where = f"{prog} {action.option_strings[0]} ({cls.__name__}.{name})"
            assert action.default == OWN_DEFAULTS.get((prog, action.dest), _expected_default(f)), where
            assert action.help.startswith(f.metadata["help"].replace("%", "%%")), where
            if (prog, action.dest) in OWN_DEFAULTS:
                assert "%(default)s" in action.help, where
            declared = f.metadata.get("choices")
            if declared is not None:
                assert action.choices and set(action.choices) <= set(declared), where
            seen += 1
    assert seen > 100


def test_the_config_flags_are_bound(parsers):
    found: dict[str, set[str]] = {}
    for parser in parsers.values():
        for prog, action in bound_actions(parser):
            found.setdefault(prog, set()).add(action.dest)
    for prog, dests in BOUND.items():
        assert dests <= found.get(prog, set()), f"{prog}: not derived from a config: {dests - found.get(prog, set())}"


@dataclass
class Toy:
    rounds: int = field(default=3, metadata={"help": "rounds, 100% of them"})
    rate: float | None = field(default=None, metadata={"help": "a rate; unset: the default one"})
    names: tuple[str, ...] = field(default=("a", "b"), metadata={"help": "names"})
    strict: bool = field(default=True, metadata={"help": "be strict"})
    how: str = field(default="x", metadata={"help": "how", "choices": ("x", "y")})
    cores: int = field(default_factory=lambda: 7, metadata={"help": "cores (default: this machine's)"})


def test_flags_read_back_into_the_dataclass():
    flags = Flags(Toy, ("rounds", "rate", "names", "strict", "how", "cores"), names={"how": "--mode"})
    parser = argparse.ArgumentParser()
    flags.add(parser)
    assert "rounds, 100% of them (default: 3)" in " ".join(parser.format_help().split())
    assert Toy(**flags.kwargs(parser.parse_args([]))) == Toy()  # no flag: the dataclass's own defaults
    args = parser.parse_args(["--rounds", "5", "--rate", "0.5", "--names", "c, d", "--no-strict", "--mode", "y",
                              "--cores", "2"])
    assert Toy(**flags.kwargs(args)) == Toy(5, 0.5, ("c", "d"), False, "y", 2)
    with pytest.raises(SystemExit):
        parser.parse_args(["--mode", "z"])  # the field's choices
    ours = argparse.ArgumentParser()
    flags.add(ours, defaults={"rounds": 9})
    assert Toy(**flags.kwargs(ours.parse_args([]))).rounds == 9
