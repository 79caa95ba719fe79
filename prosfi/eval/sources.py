"""Evaluation problem sources: a `--data SPEC` string -> problems tagged with their (source, difficulty) group.

Spec grammar (repeatable on the command line; see `SPEC_HELP`):

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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prosfi.data.problem import Problem

SPEC_HELP = ("problem source, repeatable: a problems JSONL path (or jsonl:PATH); kk:2..8 (generated Knights & "
             "Knaves by number of people); fol:hard or fol:easy,medium (generated ProverQA-style); "
             "proverqa:hard=FILE (a ProverQA dev JSON file; proverqa:hard alone fetches it from the hub); "
             "kkhub:FILE or kkhub:3 (K&K in the hub's JSONL format); rgkk:2..7 (reasoning-gym's knights_knaves, "
             "in each puzzle's own words: saints/sinners, heroes/villains, …); folio:FILE (FOLIO JSONL); "
             "gsm8k:FILE (GSM8K JSONL); physics:easy,medium,hard (generated physics with units); gsm_symbolic:N "
             "(reasoning-gym GSM-Symbolic); scibench:FILE (SciBench JSON); toy or toy:1..3 "
             "(the CPU demo's rule chains, held out from its training; toy:1,shuffled for shuffled premises)")
PHYSICS_DIFFICULTIES = ("easy", "medium", "hard")
PHYSICS_LEVELS = PHYSICS_DIFFICULTIES + ("demo",)  # physics:demo: the quantity CPU demo's task, fresh draws

FOL_DIFFICULTIES = ("easy", "medium", "hard", "extra")
GROUP_KEY = "eval_group"  # Problem.extra key holding [source, difficulty] once a Source has loaded it
DEFAULT_SEED = 20_261_201  # generated eval problems: a seed far from the training recipes' (0, 1, ...)


class SpecError(ValueError):
    """A `--data` spec the user must fix; the message says what is accepted."""


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


def _tag(problems: Iterable[Problem], source: str, difficulty=None) -> list[Problem]:
    out = []
    for p in problems:
        d = p.difficulty if difficulty is None else difficulty
        p.extra[GROUP_KEY] = [source, None if d is None else str(d)]
        out.append(p)
    return out


def _people(text: str) -> list[int]:
    """'2..8' / '2-8' -> 2..8; '3' -> [3]; '2,4' -> [2, 4]."""
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:(?:\.\.|-)\s*(\d+)\s*)?", part)
        if not m:
            raise SpecError(f"kk:{text}: expected numbers of people like 2..8, 3 or 2,4")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if not 2 <= lo <= hi <= 8:
            raise SpecError(f"kk:{text}: numbers of people must be within 2..8, low to high")
        out.extend(range(lo, hi + 1))
    return sorted(set(out))


def _levels(text: str) -> list[str]:
    if text in ("", "all"):
        return list(FOL_DIFFICULTIES)
    if ".." in text:
        lo, hi = text.split("..", 1)
        if lo not in FOL_DIFFICULTIES or hi not in FOL_DIFFICULTIES:
            raise SpecError(f"fol:{text}: difficulties are {', '.join(FOL_DIFFICULTIES)}")
        return list(FOL_DIFFICULTIES[FOL_DIFFICULTIES.index(lo): FOL_DIFFICULTIES.index(hi) + 1])
    levels = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in levels if x not in FOL_DIFFICULTIES]
    if bad or not levels:
        raise SpecError(f"fol:{text}: difficulties are {', '.join(FOL_DIFFICULTIES)} (comma-separated or a..b)")
    return levels


def load_source(spec: str, count: int = 100, limit: int | None = None, seed: int = DEFAULT_SEED,
                verifier=None) -> Source:
    """Problems for one spec. `count`: generated problems per difficulty; `limit`: at most this many per
    (source, difficulty) group (files are cut, generators draw fewer). `verifier` (optional) is used
    by the FOLIO loader to compare FOLIO's gold labels with the verifier's."""
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    known = ("jsonl", "kk", "fol", "proverqa", "kkhub", "kk_hub", "folio", "rgkk", "gsm8k", "physics",
             "gsm_symbolic", "scibench", "toy")
    if spec == "toy":
        kind, sep, rest = "toy", ":", ""
    if not sep or (kind not in known and Path(spec).exists()):  # a bare path (even one with a colon)
        kind, rest = "jsonl", spec
    per_group = count if limit is None else min(count, limit)
    if kind in ("folio", "kkhub", "kk_hub", "gsm8k", "scibench"):
        if not rest:
            raise SpecError(f"--data {spec!r}: give a file after the colon, e.g. {kind}:FILE")
        if not (kind != "folio" and rest.isdigit()) and not Path(rest).is_file():
            raise SpecError(f"--data {spec!r}: no such file {rest!r}")
    if kind == "jsonl":
        return _jsonl(spec, rest, limit)
    if kind == "kk":
        from prosfi.data.kk import KKConfig, generate

        src = Source("kk", spec)
        for n in _people(rest):
            src.problems += _tag(generate(KKConfig(people=n), per_group, seed), "kk", n)
        return _unique(src)
    if kind == "rgkk":
        from prosfi.data.kk import load_reasoning_gym

        src = Source("rgkk", spec)
        for n in _people(rest):
            src.problems += _tag(load_reasoning_gym(n, per_group, seed), "rgkk", n)
        return _unique(src)
    if kind == "fol":
        from prosfi.data.pqa_gen import FOLGenConfig
        from prosfi.data.pqa_gen import generate as fol_generate

        src = Source("fol", spec)
        for level in _levels(rest):
            problems = fol_generate(FOLGenConfig(difficulty=level), per_group, seed)
            src.problems += _tag(problems, "fol", level)
        return _unique(src)
    if kind == "proverqa":
        from prosfi.data.proverqa import SPLITS, load_proverqa

        split, _, path = rest.partition("=")
        if split not in SPLITS or split == "train":
            raise SpecError(f"proverqa:{rest}: the split must be easy, medium or hard (the train file has no "
                            "FOL annotations: evaluate on the dev splits, train on generated problems)")
        if path and not Path(path).is_file():
            raise SpecError(f"--data {spec!r}: no such file {path!r}")
        from prosfi.data.hub import HubUnavailable

        failures: list = []
        try:
            problems = load_proverqa(split, path=path or None, limit=limit, skipped=failures)
        except HubUnavailable as exc:
            raise HubUnavailable(f"{exc} With prosfi eval: --data proverqa:{split}=FILE.") from None
        src = Source("proverqa", spec, _tag(problems, "proverqa", split))
        src.skipped = [(str(i), reason) for i, reason in failures]
        return _unique(src)
    if kind in ("kkhub", "kk_hub"):
        return _kk_hub(spec, rest, limit)
    if kind == "toy":
        return _toy(spec, rest, per_group, seed)
    if kind == "folio":
        from prosfi.data.folio import load_folio

        skipped: list = []
        problems = load_folio(rest, limit=limit, skipped=skipped)
        src = Source("folio", spec, _tag(problems, "folio"), skipped=[(str(i), r) for i, r in skipped])
        if verifier is not None and src.problems:
            src.notes += folio_label_notes(src.problems, verifier)
        return _unique(src)
    if kind in ("gsm8k", "physics", "gsm_symbolic", "scibench"):
        return _quantity_source(kind, spec, rest, per_group, limit, seed)
    raise SpecError(f"--data {spec!r}: unknown source {kind!r}. {SPEC_HELP}")


def _quantity_source(kind: str, spec: str, rest: str, per_group: int, limit: int | None, seed: int) -> Source:
    """The quantity sources (docs/quantity.md "Data"): files are read, generators drawn with `seed`."""
    src = Source(kind, spec)
    if kind == "gsm8k":
        import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
        from prosfi.data.gsm8k import LoadReport, load_gsm8k

        report = LoadReport()
        src.problems = _tag(load_gsm8k(rest, limit=limit, report=report), "gsm8k")
        src.skipped = [(str(i), why) for i, why in report.skipped]
    elif kind == "scibench":
        from prosfi.data.scibench import load_scibench

        skipped: list = []
        src.problems = _tag(load_scibench(rest, limit=limit, skipped=skipped), "scibench")
        src.skipped = [(str(i), why) for i, why in skipped]
    elif kind == "physics":
        from prosfi.data.physics import generate

        levels = [x.strip() for x in (rest or ",".join(PHYSICS_DIFFICULTIES)).split(",") if x.strip()]
        bad = [x for x in levels if x not in PHYSICS_LEVELS]
        if bad or not levels:
            raise SpecError(f"physics:{rest}: difficulties are {', '.join(PHYSICS_DIFFICULTIES)} (comma-separated), "
                            "or demo (the quantity CPU demo's task)")
        for level in levels:
            src.problems += _tag(generate(level, per_group, seed), "physics", level)
    else:
        import prosfi.domains.quantity  # noqa: F401  (gold chains are built under its rules)
        from prosfi.data.gsm_symbolic import generate as gsms_generate

        if rest and not rest.isdigit():
            raise SpecError(f"gsm_symbolic:{rest}: give a number of problems, e.g. gsm_symbolic:100")
        n = int(rest) if rest else per_group
        n = n if limit is None else min(n, limit)
        skipped = []
        src.problems = _tag(gsms_generate(n, seed, skipped=skipped), "gsm_symbolic")
        src.skipped = [(str(i), why) for i, why in skipped]
    return _unique(src)


def _toy(spec: str, rest: str, count: int, seed: int) -> Source:
    """Toy rule chains from the evaluation share (`split="eval"`), `count` per number of rules."""
    from prosfi.data.toy import ToyConfig, generate

    words = [w.strip() for w in rest.split(",") if w.strip()]
    layouts = [w for w in words if w in ("fixed", "shuffled")]
    depths_text = ",".join(w for w in words if w not in layouts) or "1"
    depths: list[int] = []
    for part in depths_text.split(","):
        m = re.fullmatch(r"(\d+)(?:(?:\.\.|-)(\d+))?", part)
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2) or m.group(1)) <= 3:
            raise SpecError(f"--data {spec!r}: give the number of rules per chain, 1 to 3 (toy:1, toy:1..3), "
                            "optionally with a layout (toy:1,shuffled)")
        depths.extend(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    layout = layouts[-1] if layouts else "fixed"
    src = Source("toy", spec)
    for d in sorted(set(depths)):
        drawn = generate(ToyConfig(min_depth=d, max_depth=d, layout=layout), 3 * count, seed, split="eval")
        seen: set = set()
        problems = []
        for p in drawn:  # one-rule chains over a fixed vocabulary repeat: each problem once
            key = (frozenset(x.formal for x in p.premises), p.goal)
            if key not in seen and len(problems) < count:
                seen.add(key)
                problems.append(p)
        if len(problems) < count:
            src.notes.append(f"toy:{d}: only {len(problems)} distinct held-out problems (asked for {count})")
        for p in problems:
            p.id = f"toy-eval-{layout}-{d}-s{seed}-{p.id.rsplit('-', 1)[1]}"
        src.problems += _tag(problems, "toy", d)
    return _unique(src)


def _jsonl(spec: str, path: str, limit: int | None) -> Source:
    from prosfi.data.problem import read_problems

    if not Path(path).exists():
        raise SpecError(f"--data {spec!r}: no such file {path!r}")
    src = Source(Path(path).stem, spec)
    counts: dict[tuple, int] = {}
    try:
        for p in read_problems(path, validate=False):
            g = (p.source or src.name, None if p.difficulty is None else str(p.difficulty))
            if limit is not None and counts.get(g, 0) >= limit:
                continue
            try:
                p.validate()
            except ValueError as exc:
                src.skipped.append((p.id, str(exc)))
                continue
            counts[g] = counts.get(g, 0) + 1
            src.problems += _tag([p], g[0], g[1])
    except ValueError as exc:
        raise SpecError(f"--data {spec!r}: {exc}") from None
    if not src.problems and not src.skipped:
        raise SpecError(f"--data {spec!r}: the file has no problems (is it empty?)")
    return _unique(src)


def _kk_hub(spec: str, rest: str, limit: int | None) -> Source:
    from prosfi.data import kk

    src = Source("kk_hub", spec)
    if rest.isdigit():
        from prosfi.data.hub import HubUnavailable

        try:
            src.problems = _tag(kk.load_kk_hub(int(rest), "test", limit), "kk_hub")
        except HubUnavailable as exc:
            raise HubUnavailable(f"{exc} With prosfi eval: --data kkhub:FILE.") from None
        return _unique(src)
    from prosfi.data.hub import read_records

    counts: dict[int, int] = {}
    unreadable: list = []
    records = read_records(rest, unreadable)  # lines that are not JSON objects are skipped, not fatal
    src.skipped += [(str(where), why) for where, why in unreadable]
    for i, rec in enumerate(records):
        names = rec.get("names")
        n = len(names) if isinstance(names, list) else 0
        if limit is not None and counts.get(n, 0) >= limit:
            continue
        try:
            p = kk.problem_from_kk_record(rec, pid=f"kkhub-{n}-{i:04d}")
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            src.skipped.append((str(i), str(exc)))
            continue
        counts[n] = counts.get(n, 0) + 1
        src.problems += _tag([p], "kk_hub", n)
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


def folio_label_notes(problems: Sequence[Problem], verifier) -> list[str]:
    """Compare each problem's gold label with the verifier's (FOLIO's own FOL has annotation errors)."""
    from prosfi.data.labels import verified_labels

    labels = verified_labels(problems, verifier)
    notes = []
    for p, label in zip(problems, labels):
        p.extra["verifier_label"] = label
        if label is not None and label != p.answer_label:
            notes.append(f"{p.id}: gold label {p.answer_label}, verifier says {label}")
    undecided = sum(label is None for label in labels)
    head = (f"{problems[0].source or 'gold'} labels: {len(problems) - len(notes) - undecided} of {len(problems)} "
            f"confirmed by the verifier, {len(notes)} disagree, {undecided} undecided")
    return [head] + notes


def content_key(problem: Problem) -> tuple:
    """Same content (logic: premises and goal, formal text), whatever the id: the held-out check's notion of
    'same problem' (`Domain.content_key`)."""
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def overlap(problems: Sequence[Problem], training: Sequence[Problem]) -> list[str]:
    """Ids of evaluated problems whose premises and goal equal a training problem's."""
    keys = {content_key(p) for p in training}
    return [p.id for p in problems if content_key(p) in keys]


__all__ = ["SPEC_HELP", "Source", "SpecError", "all_problems", "content_key", "group_of", "load_source",
           "load_sources", "overlap"]
