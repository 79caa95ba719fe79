"""Evaluation problem sources: a `--data SPEC` string -> problems tagged with their (source, difficulty) group.

The sources, their names and the loaders are registered once in `prosfi.data.sources` (the same names are
`prosfi data` commands and recipe `dataset:` values; `proverqa_gen:hard` is `fol:hard`); this module parses a spec,
loads the source's domains and tags each problem with its group. Spec grammar (repeatable; see `spec_help()`):

    PATH.jsonl | jsonl:PATH      a problems JSONL (docs/data.md); group (problem.source, difficulty)
    kk:2..8 | kk:3 | kk:2,4      generated Knights & Knaves, `count` puzzles per number of people
    fol:hard | fol:easy,hard     generated ProverQA-style problems per difficulty (easy medium hard extra)
    proverqa:hard=FILE           a ProverQA dev JSON file as the benchmark ships it (proverqa:hard alone: the hub)
    kkhub:FILE | kkhub:3         K&K in the hub's format (K-and-K/knights-and-knaves): a local JSONL, or the
                                 hub's test file for that many people
    rgkk:2..7                    reasoning-gym's knights_knaves (`count` per number of people), in each puzzle's
                                 own role words (saints/sinners, heroes/villains, …)
    folio:FILE                   FOLIO JSONL (premises-FOL / conclusion-FOL / label), see prosfi.data.folio
    gsm8k:FILE                   GSM8K's public JSONL (question / answer with `#### N`); group (gsm8k, None)
    physics:easy | physics:easy,hard   generated physics problems with units per difficulty (easy medium hard;
                                 physics:demo is the quantity CPU demo's task, for its model on fresh draws)
    gsm_symbolic:N               N GSM-Symbolic problems from reasoning-gym (`count` when N is omitted)
    scibench:FILE                a SciBench JSON file (problem_text / answer_number / LaTeX unit)
    toy | toy:1..3 | toy:2,shuffled  the CPU demo's toy rule chains by number of rules (default 1, the demo's
                                 fixed layout; `shuffled` for shuffled premises), drawn from the evaluation
                                 share of the space that training never draws from (prosfi.data.toy)

Generators draw with `seed` itself, never a hidden offset, and their ids carry it (`prosfi.data.problem.problem_id`):
`prosfi data physics --difficulty easy --seed 0` writes exactly the problems (and ids) of
`prosfi eval --data physics:easy --data-seed 0`, and two different draws never share an id.

The contract other tools rely on: `load_source(spec, ...) -> Source` whose `problems` have unique ids
and whose `group(problem)` is `(source, difficulty)` with difficulty a string or None; records a loader
could not use are in `Source.skipped` as `(record, reason)` and never raise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prosfi.data import sources as registry
from prosfi.data.problem import Problem
from prosfi.data.sources import SpecError, folio_label_notes


def spec_help() -> str:
    """`--data`'s help: every source registered when it is asked (a command builds its parser at run time, so a
    source registered after import is listed too), its spec forms and the aliases (docs/eval.md says what each is)."""
    forms = [form for s in registry.SOURCES.values() if s.read_spec for form in s.spec.split()]
    aliases = [f"{alias} = {name}" for alias, name in registry.ALIASES.items()]
    return (f"problem source, repeatable: {' '.join(forms)}" + (f" (aliases: {', '.join(aliases)})" if aliases else "")
            + "; docs/eval.md, Problem sources")


GROUP_KEY = "eval_group"  # Problem.extra key holding [source, difficulty] once a Source has loaded it
DEFAULT_SEED = 20_261_201  # generated eval problems: a seed far from the training recipes' (0, 1, ...)


@dataclass
class Source:
    """The problems of one `--data` spec, all tagged with their group."""

    name: str  # the group's source column: kk, fol, proverqa, kk_hub, folio, or a JSONL's problem.source
    spec: str
    problems: list[Problem] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (record id or index, reason)
    notes: list[str] = field(default_factory=list)  # e.g. FOLIO label disagreements, filled later

    @staticmethod
    def group(problem: Problem) -> tuple[str, str | None]:
        """(source, difficulty) of a problem loaded by any Source."""
        return group_of(problem)


def group_of(problem: Problem) -> tuple[str, str | None]:
    """The (source, difficulty) group of a problem: the tag a Source set, else its own fields."""
    tag = problem.extra.get(GROUP_KEY)
    if isinstance(tag, (list, tuple)) and len(tag) == 2:
        return str(tag[0]), None if tag[1] is None else str(tag[1])
    return problem.source or "problems", None if problem.difficulty is None else str(problem.difficulty)


def _tag(problems, source: str, difficulty=None) -> list[Problem]:
    out = []
    for p in problems:
        d = p.difficulty if difficulty is None else difficulty
        p.extra[GROUP_KEY] = [source, None if d is None else str(d)]
        out.append(p)
    return out


def parse_spec(spec: str) -> tuple[registry.DataSource, str]:
    """The registered source a spec names and the argument after its colon. A bare path (even one with a
    colon in it) is a problems JSONL; a bare source name (`toy`) is that source with no argument."""
    spec = spec.strip()
    name, sep, rest = spec.partition(":")
    known = registry.resolve_name(name)
    if not sep and known and not Path(spec).exists():
        return registry.get(name, "eval"), ""
    if not sep or (known is None and Path(spec).exists()):
        return registry.get("jsonl", "eval"), spec
    try:
        return registry.get(name, "eval", what="source"), rest
    except SpecError as exc:
        raise SpecError(f"--data {spec!r}: {exc}") from None


def load_source(spec: str, count: int = 100, limit: int | None = None, seed: int = DEFAULT_SEED,
                verifier=None) -> Source:
    """Problems for one spec. `count`: generated problems per difficulty; `limit`: at most this many per
    (source, difficulty) group (files are cut, generators draw fewer). `verifier` (optional) is used
    by the FOLIO loader to compare FOLIO's gold labels with the verifier's."""
    from prosfi.domains import domain_for

    spec = spec.strip()
    source, arg = parse_spec(spec)
    for kind in source.kinds:  # gold chains are built under their domain's rules
        domain_for(kind)
    per_group = count if limit is None else min(count, limit)
    loaded = source.read_spec(registry.SpecArgs(spec, arg, per_group, limit, seed, verifier))
    name = loaded.name or source.group_name
    src = Source(name, spec, skipped=list(loaded.skipped), notes=list(loaded.notes))
    for label, problems in loaded.groups:
        column, difficulty = label if isinstance(label, tuple) else (name, label)
        src.problems += _tag(problems, column, difficulty)
    return _unique(src)


def _unique(src: Source) -> Source:
    seen: set[str] = set()
    for p in src.problems:
        if p.id in seen:
            raise SpecError(f"--data {src.spec!r}: problem id {p.id!r} occurs twice")
        seen.add(p.id)
    return src


def load_sources(specs: Sequence[str], count: int = 100, limit: int | None = None, seed: int = DEFAULT_SEED,
                 verifier=None) -> list[Source]:
    """`load_source` for each spec; ids must be unique across sources (a clash is a SpecError)."""
    sources = [load_source(s, count=count, limit=limit, seed=seed, verifier=verifier) for s in specs]
    owner: dict[str, str] = {}
    for src in sources:
        for p in src.problems:
            if p.id in owner:
                raise SpecError(f"problem id {p.id!r} is in both --data {owner[p.id]!r} and {src.spec!r}")
            owner[p.id] = src.spec
    return sources


def all_problems(sources: Sequence[Source]) -> list[Problem]:
    return [p for s in sources for p in s.problems]


def content_key(problem: Problem) -> tuple:
    """Same content (logic: premises and goal, formal text), whatever the id: the held-out check's notion of
    'same problem' (`Domain.content_key`)."""
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def overlap(problems: Sequence[Problem], training: Sequence[Problem]) -> list[str]:
    """Ids of evaluated problems whose premises and goal equal a training problem's."""
    keys = {content_key(p) for p in training}
    return [p.id for p in problems if content_key(p) in keys]


__all__ = ["Source", "SpecError", "all_problems", "content_key", "folio_label_notes", "group_of", "load_source",
           "load_sources", "overlap", "parse_spec", "spec_help"]
