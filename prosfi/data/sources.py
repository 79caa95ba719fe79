"""The data sources: every problem source registered once, and every way of naming one derived from here.

A `DataSource` has one canonical name (and the old spellings users have, as aliases), the problem kinds it
yields, and up to three loaders, one per way prosfi reads data:

- `prosfi data NAME` (`settings` + `write`): the subcommand's flags are the fields of the `settings`
  dataclass (name, type, default, `help` and `choices` metadata), `write(settings)` loads the problems;
- `--data NAME:ARG` in eval, the PRM tools, serve and the integrations (`spec` + `read_spec`): ARG says
  which groups to load (`kk:2..8`, `fol:easy,hard`, `gsm8k:FILE`), the problems come back by group;
- a recipe's `dataset: NAME` (`train`): the run's problems from `dataset_size`, `dataset_seed`,
  `dataset_difficulty`, `dataset_path`.

The three loaders of one source draw with the seed they are given, and every id a source composes beyond the
generators' own (`problem.problem_id`) is composed here, so the id names the problem whichever way it was read.
`sources_table()` is the table in docs/data.md ("Sources"); a test keeps the two equal.

Gold chains of quantity problems are built under the quantity domain's rules, which this layer cannot import:
a caller above the domains loads the domain of each of a source's `kinds` first (`prosfi.domains.domain_for`).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem
from prosfi.usage import UsageError

USES = ("data", "eval", "train")  # `prosfi data NAME`, `--data NAME:ARG`, a recipe's `dataset: NAME`
FOL_DIFFICULTIES = ("easy", "medium", "hard", "extra")
PHYSICS_DIFFICULTIES = ("easy", "medium", "hard")
PHYSICS_LEVELS = PHYSICS_DIFFICULTIES + ("demo",)  # physics:demo: the quantity CPU demo's task, fresh draws


class SpecError(UsageError):
    """A source name or `--data` spec the user must fix; the message says what is accepted."""


@dataclass
class Loaded:
    """What one loader read: problems by group (a label, or None for each problem's own difficulty), the
    records it could not use as (record id or index, reason), and notes for the user."""

    groups: list[tuple[Any, list[Problem]]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    name: str | None = None  # the group's source column when it is not the source's own (a JSONL's stem)
    what: str = ""  # `prosfi data`: "Knights & Knaves problems", said as "wrote N <what> to FILE"
    tail: str = ""  # `prosfi data`: said after the file, e.g. " (4 with a gold chain)"
    refusal: str | None = None  # `prosfi data`: nothing is written, exit 1 (labels the verifier did not confirm)

    @property
    def problems(self) -> list[Problem]:
        return [p for _, group in self.groups for p in group]

    def add(self, label: Any, problems: list[Problem]) -> Loaded:
        self.groups.append((label, list(problems)))
        return self


@dataclass(frozen=True)
class SpecArgs:
    """One `--data NAME:ARG`: the spec as written, ARG, problems per group (`--count`, cut by `--limit`), the
    per-group `--limit` for files, the generators' seed, and the verifier (FOLIO compares its labels)."""

    spec: str
    arg: str
    count: int
    limit: int | None
    seed: int
    verifier: Any = None


@dataclass(frozen=True)
class TrainDraw:
    """A recipe's draw: `dataset_size` (or a set's size), `dataset_seed` (+ a set's offset),
    `dataset_difficulty`, `dataset_path`, whether Uncertain problems are left out, `toy_layout`."""

    count: int
    seed: int = 0
    difficulty: str | None = None
    path: str | None = None
    exclude_uncertain: bool = False
    layout: str = "shuffled"


@dataclass(frozen=True)
class DataSource:
    """One problem source. `file`: a recipe reads a fixed list (split into disjoint sets, never redrawn);
    `needs_path`: a recipe must give `dataset_path`; `offline`: a dry run can draw it (no hub, no optional
    package); `column`: the eval group's source column when it is not `name`."""

    name: str
    help: str
    kinds: tuple[str, ...] = ()  # () : whatever kinds the file holds
    aliases: tuple[str, ...] = ()
    settings: type | None = None
    write: Callable[[Any], Loaded] | None = None
    spec: str = ""  # the `--data` forms, as the docs and `--help` show them
    read_spec: Callable[[SpecArgs], Loaded] | None = None
    train: Callable[[TrainDraw], list[Problem]] | None = None
    file: bool = False
    needs_path: bool = False
    offline: bool = True
    column: str | None = None
    difficulty_help: str = ""  # what `dataset_difficulty` means for this source (recipes)
    path_hint: str = ""  # where to get the file a recipe's `dataset_path` must name
    level: str = "difficulty"  # what an eval group's difficulty counts (plots' x axis): people for K&K
    widen: str = ""  # a small generated space: what a wider dataset_difficulty means (preflight's hint)
    # a hub source: whether the run's file (by dataset_difficulty) is in the local hub cache, for a dry run
    # with HF_HUB_OFFLINE set; returns where it is, or raises ValueError saying what to do instead
    hub_cache: Callable[[str | None], str] | None = None

    @property
    def uses(self) -> tuple[str, ...]:
        return tuple(u for u, f in zip(USES, (self.write, self.read_spec, self.train)) if f is not None)

    @property
    def group_name(self) -> str:
        return self.column or self.name



def _proverqa_hub_cache(difficulty: str | None) -> str:
    """The ProverQA split a recipe names, looked up in the local hub cache only (no network)."""
    from prosfi.data.proverqa import PROVERQA_REPO, SPLITS

    filename = SPLITS.get(difficulty or "hard", "")
    try:
        from huggingface_hub import hf_hub_download

        hf_hub_download(PROVERQA_REPO, filename, repo_type="dataset", local_files_only=True)
    except Exception as e:
        raise ValueError(f"{PROVERQA_REPO} {filename} is not in the local hub cache and HF_HUB_OFFLINE is set; "
                         "download it once with network, give its local copy as dataset_path, or use dataset "
                         "proverqa_gen") from e
    return f"({PROVERQA_REPO} {filename}) is in the local hub cache"

SOURCES: dict[str, DataSource] = {}
ALIASES: dict[str, str] = {}  # old spelling -> canonical name


def register(source: DataSource) -> DataSource:
    """Add a source; a name or alias another source has is a ValueError. `write` needs `settings`."""
    taken = [n for n in (source.name, *source.aliases) if n in SOURCES or n in ALIASES]
    if taken:
        raise ValueError(f"data source name {taken[0]!r} is taken by {resolve_name(taken[0])!r}")
    if source.write is not None and source.settings is None:
        raise ValueError(f"data source {source.name!r}: a `prosfi data` loader needs its settings dataclass")
    SOURCES[source.name] = source
    ALIASES.update(dict.fromkeys(source.aliases, source.name))
    return source


def resolve_name(name: str) -> str | None:
    return name if name in SOURCES else ALIASES.get(name)


def names(use: str | None = None) -> tuple[str, ...]:
    """Canonical names, in registry order; with `use` (data, eval, train) only the sources that have it."""
    return tuple(n for n, s in SOURCES.items() if use is None or use in s.uses)


def known_names(use: str | None = None) -> str:
    """'fol (also proverqa_gen), gsm8k, ...': the names a user may write for `use`."""
    parts = []
    for n in names(use):
        aliases = SOURCES[n].aliases
        parts.append(f"{n} (also {', '.join(aliases)})" if aliases else n)
    return ", ".join(parts)


def get(name: str, use: str | None = None, what: str = "data source") -> DataSource:
    """The source called `name` (or an alias of it), one that has `use`; SpecError in one line listing the
    names that would do."""
    canonical = resolve_name(name)
    if canonical is None:
        raise SpecError(f"unknown {what} {name!r}; known: {known_names(use)}")
    source = SOURCES[canonical]
    if use is not None and use not in source.uses:
        places = {"data": "`prosfi data`", "eval": "`--data` specs", "train": "recipes"}
        raise SpecError(f"{what} {name!r} is not for {places[use]} (it is for "
                        f"{', '.join(places[u] for u in source.uses)}); known: {known_names(use)}")
    return source


def settings_fields(cls: type) -> list[tuple[str, Any, Any, dict]]:
    """(name, type, default, metadata) of a settings dataclass; the type resolved, `X | None` as X."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        tp = hints[f.name]
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if args and type(None) in typing.get_args(tp):
            tp = args[0]
        out.append((f.name, tp, f.default, dict(f.metadata)))
    return out


def level_name(column: str) -> str:
    """What the difficulty of an eval group whose source column is `column` counts ("people" for K&K)."""
    for s in SOURCES.values():
        if s.group_name == column:
            return s.level
    return "difficulty"


def sources_table() -> str:
    """The sources as docs/data.md shows them (Markdown), one row per source in registry order."""
    rows = ["| source | also called | kinds | `prosfi data` | `--data` spec | recipe `dataset:` | problems |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in SOURCES.values():
        rows.append(" | ".join([
            f"| `{s.name}`", ", ".join(f"`{a}`" for a in s.aliases) or "–", ", ".join(s.kinds) or "any",
            f"`prosfi data {s.name}`" if s.write else "–", ", ".join(f"`{x}`" for x in s.spec.split()) or "–",
            "yes" if s.train else "–", s.help]) + " |")
    return "\n".join(rows)


# ------------------------------------------------------------------ shared parsing and checks

def people(text: str, spec_name: str = "kk", low: int = 2, high: int = 8) -> list[int]:
    """'2..8' / '2-8' -> 2..8; '3' -> [3]; '2,4' -> [2, 4]."""
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:(?:\.\.|-)\s*(\d+)\s*)?", part)
        if not m:
            raise SpecError(f"{spec_name}:{text}: expected numbers of people like 2..8, 3 or 2,4")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if not low <= lo <= hi <= high:
            raise SpecError(f"{spec_name}:{text}: numbers of people must be within {low}..{high}, low to high")
        out.extend(range(lo, hi + 1))
    return sorted(set(out))


def fol_levels(text: str) -> list[str]:
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


def _spec_file(a: SpecArgs, name: str, numbers: bool = False) -> None:
    """A `name:FILE` spec names a file that is there (`numbers`: or a number, e.g. kkhub:3)."""
    if not a.arg:
        raise SpecError(f"--data {a.spec!r}: give a file after the colon, e.g. {name}:FILE")
    if not (numbers and a.arg.isdigit()) and not Path(a.arg).is_file():
        raise SpecError(f"--data {a.spec!r}: no such file {a.arg!r}")


def _range(difficulty: str | None, default: tuple[int, int] = (2, 3)) -> list[int]:
    """A recipe's dataset_difficulty as numbers: '3' -> [3]; '2-4' -> [2, 3, 4]; None -> the default range."""
    if not difficulty:
        lo, hi = default
    else:
        text = str(difficulty).strip()
        lo_s, _, hi_s = text.partition("-")
        try:
            lo, hi = int(lo_s), int(hi_s or lo_s)
        except ValueError as e:
            raise ValueError(f"dataset_difficulty: {difficulty!r} is not a people count like '3' or '2-4'") from e
    if lo > hi:
        raise ValueError(f"dataset_difficulty: {difficulty!r} has its bounds the wrong way round")
    return list(range(lo, hi + 1))


def _spread(count: int, parts: list) -> list[tuple[Any, int]]:
    """`count` spread evenly over `parts`, the first ones taking the remainder."""
    return [(p, count // len(parts) + (1 if i < count % len(parts) else 0)) for i, p in enumerate(parts)]


def _need_path(d: TrainDraw, name: str) -> str:
    if not d.path:
        raise ValueError(f"dataset_path: required when dataset is {name!r}")
    return d.path


def _skipped(pairs) -> list[tuple[str, str]]:
    return [(str(i), str(why)) for i, why in pairs]


# ------------------------------------------------------------------ Knights & Knaves

@dataclass(frozen=True)
class KKSettings:
    people: int = field(default=3, metadata={"help": "inhabitants per puzzle (2-8)"})
    count: int = field(default=100, metadata={"help": "puzzles to generate"})
    seed: int = field(default=0, metadata={"help": "random seed"})
    depth: int = field(default=2, metadata={"help": "maximum nesting depth of a claim (1-3)"})
    width: int = field(default=2, metadata={"help": "maximum operands of and/or (2-4)"})
    hub: bool = field(default=False, metadata={"help": "load K-and-K/knights-and-knaves instead of generating"})
    split: str = field(default="test", metadata={"help": "hub split (with --hub)", "choices": ("test", "train")})
    file: str | None = field(default=None, metadata={"help": "a local copy of a hub JSONL file (with --hub)"})
    limit: int | None = field(default=None, metadata={"help": "at most this many hub records"})


def _kk_write(s: KKSettings) -> Loaded:
    from prosfi.data import kk

    if s.file:
        from prosfi.data.hub import read_records

        records = read_records(s.file)[: s.limit]
        problems = [kk.problem_from_kk_record(r) for r in records]
    elif s.hub:
        problems = kk.load_kk_hub(s.people, s.split, s.limit)
    else:
        problems = kk.generate(kk.KKConfig(people=s.people, depth=s.depth, width=s.width), s.count, s.seed)
    return Loaded(what="Knights & Knaves problems").add(None, problems)


def _kk_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.kk import KKConfig, generate

    out = Loaded()
    for n in people(a.arg):
        out.add(n, generate(KKConfig(people=n), a.count, a.seed))
    return out


def _kk_train(d: TrainDraw) -> list[Problem]:
    """`count` puzzles spread evenly over the people counts of `difficulty` (default 2-3)."""
    from prosfi.data.kk import KKConfig, generate

    out: list[Problem] = []
    for n, share in _spread(d.count, _range(d.difficulty)):
        if share:
            out.extend(generate(KKConfig(people=n), share, d.seed + 1000 * n))
    return out


def _rgkk_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.kk import load_reasoning_gym

    out = Loaded()
    for n in people(a.arg):
        out.add(n, load_reasoning_gym(n, a.count, a.seed))
    return out


def _kkhub_spec(a: SpecArgs) -> Loaded:
    from prosfi.data import kk

    _spec_file(a, "kkhub", numbers=True)
    if a.arg.isdigit():
        from prosfi.data.hub import HubUnavailable

        try:
            return Loaded().add(None, kk.load_kk_hub(int(a.arg), "test", a.limit))
        except HubUnavailable as exc:
            raise HubUnavailable(f"{exc} With prosfi eval: --data kkhub:FILE.") from None
    from prosfi.data.hub import read_records

    out = Loaded()
    counts: dict[int, int] = {}  # problems kept per number of people (`limit` is per group)
    unreadable: list = []
    records = read_records(a.arg, unreadable)  # lines that are not JSON objects are skipped, not fatal
    out.skipped += _skipped(unreadable)
    for i, rec in enumerate(records):
        names_ = rec.get("names")
        n = len(names_) if isinstance(names_, list) else 0
        if a.limit is not None and counts.get(n, 0) >= a.limit:
            continue
        try:
            p = kk.problem_from_kk_record(rec)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            out.skipped.append((str(i), str(exc)))
            continue
        counts[n] = counts.get(n, 0) + 1
        out.add(n, [p])
    return out


# ------------------------------------------------------------------ ProverQA, generated and real; FOLIO

@dataclass(frozen=True)
class FolSettings:
    difficulty: str = field(default="hard", metadata={"help": "reasoning depth: easy 1-2, medium 3-5, hard 6-9, "
                                                      "extra 10-14", "choices": FOL_DIFFICULTIES})
    count: int = field(default=100, metadata={"help": "problems (labels True/False/Uncertain in turn)"})
    seed: int = field(default=0, metadata={"help": "random seed"})
    verify: bool = field(default=True, metadata={"help": "confirm every label with the verifier before writing",
                                                 "off": "skip confirming every label with the verifier"})
    backends: str = field(default="z3", metadata={"help": "verifier backends for the label check"})


def _fol_write(s: FolSettings) -> Loaded:
    from prosfi.data.pqa_gen import FOLGenConfig, generate

    problems = generate(FOLGenConfig(difficulty=s.difficulty), s.count, s.seed)
    out = Loaded(what=f"ProverQA-style problems ({s.difficulty})").add(None, problems)
    if s.verify:
        from prosfi.data.labels import label_mismatches
        from prosfi.verify.config import VerifierConfig
        from prosfi.verify.verifier import Verifier

        with Verifier(VerifierConfig(backends=s.backends)) as v:
            bad = label_mismatches(problems, v)
        if bad:
            out.notes += [f"{pid}: generated label {gold}, verifier says {got or 'nothing decisive'}"
                          for pid, gold, got in bad[:10]]
            out.refusal = f"{len(bad)} of {len(problems)} labels not confirmed; nothing written"
        else:
            out.notes.append(f"all {len(problems)} labels confirmed by the verifier ({s.backends})")
    return out


def _fol_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.pqa_gen import FOLGenConfig, generate

    out = Loaded()
    for level in fol_levels(a.arg):
        out.add(level, generate(FOLGenConfig(difficulty=level), a.count, a.seed))
    return out


def _fol_train(d: TrainDraw) -> list[Problem]:
    """Generated ProverQA-style problems (default medium); about a third are Uncertain, so a draw that leaves
    them out draws twice as many."""
    from prosfi.data.pqa_gen import FOLGenConfig, generate

    return generate(FOLGenConfig(difficulty=d.difficulty or "medium"), 2 * d.count if d.exclude_uncertain
                    else d.count, d.seed)


@dataclass(frozen=True)
class ProverQASettings:
    split: str = field(default="hard", metadata={"help": "dev split", "choices": ("easy", "medium", "hard", "train")})
    file: str | None = field(default=None, metadata={"help": "a local copy of the split's JSON file instead of the hub"})
    limit: int | None = field(default=None, metadata={"help": "at most this many records"})


def _proverqa_write(s: ProverQASettings) -> Loaded:
    from prosfi.data.proverqa import load_proverqa

    skipped: list = []
    problems = load_proverqa(s.split, path=s.file, limit=s.limit, skipped=skipped)
    return Loaded(skipped=_skipped(skipped), what=f"ProverQA problems ({s.split})").add(None, problems)


def _proverqa_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.hub import HubUnavailable
    from prosfi.data.proverqa import SPLITS, load_proverqa

    split, _, path = a.arg.partition("=")
    if split not in SPLITS or split == "train":
        raise SpecError(f"proverqa:{a.arg}: the split must be easy, medium or hard (the train file has no "
                        "FOL annotations: evaluate on the dev splits, train on generated problems)")
    if path and not Path(path).is_file():
        raise SpecError(f"--data {a.spec!r}: no such file {path!r}")
    failures: list = []
    try:
        problems = load_proverqa(split, path=path or None, limit=a.limit, skipped=failures)
    except HubUnavailable as exc:
        raise HubUnavailable(f"{exc} With prosfi eval: --data proverqa:{split}=FILE.") from None
    return Loaded(skipped=_skipped(failures)).add(split, problems)


def _proverqa_train(d: TrainDraw) -> list[Problem]:
    """opendatalab/ProverQA (a dev split, or the train file), or the same file read locally from `path`."""
    from prosfi.data.proverqa import load_proverqa

    return load_proverqa(d.difficulty or "hard", path=d.path, limit=d.count)


def _folio_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.folio import load_folio

    _spec_file(a, "folio")
    skipped: list = []
    problems = load_folio(a.arg, limit=a.limit, skipped=skipped)
    out = Loaded(skipped=_skipped(skipped)).add(None, problems)
    if a.verifier is not None and problems:
        out.notes += folio_label_notes(problems, a.verifier)
    return out


def folio_label_notes(problems, verifier) -> list[str]:
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


# ------------------------------------------------------------------ the CPU demo's toy rule chains

@dataclass(frozen=True)
class ToySettings:
    depth: str = field(default="1", metadata={"help": "rules per chain: a number or a range such as 1-3 (the demo: 1)"})
    layout: str = field(default="fixed", metadata={
        "help": "fixed: fact h1, rules h2.., distractors after (the demo's toy_layout); shuffled: any order",
        "choices": ("fixed", "shuffled")})
    count: int = field(default=100, metadata={"help": "problems (labels True/False in turn)"})
    seed: int = field(default=0, metadata={"help": "random seed (the demo draws SFT, GRPO and held-out problems "
                                           "from seeds of its own; another seed gives other problems)"})


def _toy_write(s: ToySettings) -> Loaded:
    from prosfi.data.toy import ToyConfig, generate

    lo, _, hi = str(s.depth).partition("-")
    try:
        depths = (int(lo), int(hi or lo))
    except ValueError:
        raise ValueError(f"--depth: a number or a range such as 1-3, got {s.depth!r}") from None
    problems = generate(ToyConfig(min_depth=depths[0], max_depth=depths[1], layout=s.layout), s.count, s.seed)
    return Loaded(what=f"toy rule chains (depth {s.depth}, {s.layout} layout)").add(None, problems)


def _toy_spec(a: SpecArgs) -> Loaded:
    """Toy rule chains from the evaluation share (`split="eval"`), `count` per number of rules; ids
    `toy-eval-<layout>-<rules>-s<seed>-NNNN`."""
    from prosfi.data.toy import ToyConfig, generate

    words = [w.strip() for w in a.arg.split(",") if w.strip()]
    layouts = [w for w in words if w in ("fixed", "shuffled")]
    depths_text = ",".join(w for w in words if w not in layouts) or "1"
    depths: list[int] = []
    for part in depths_text.split(","):
        m = re.fullmatch(r"(\d+)(?:(?:\.\.|-)(\d+))?", part)
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2) or m.group(1)) <= 3:
            raise SpecError(f"--data {a.spec!r}: give the number of rules per chain, 1 to 3 (toy:1, toy:1..3), "
                            "optionally with a layout (toy:1,shuffled)")
        depths.extend(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    layout = layouts[-1] if layouts else "fixed"
    out = Loaded()
    for d in sorted(set(depths)):
        drawn = generate(ToyConfig(min_depth=d, max_depth=d, layout=layout), 3 * a.count, a.seed, split="eval")
        seen: set = set()
        problems = []
        for p in drawn:  # one-rule chains over a fixed vocabulary repeat: each problem once
            key = (frozenset(x.formal for x in p.premises), p.goal)
            if key not in seen and len(problems) < a.count:
                seen.add(key)
                problems.append(p)
        if len(problems) < a.count:
            out.notes.append(f"toy:{d}: only {len(problems)} distinct held-out problems (asked for {a.count})")
        for p in problems:
            p.id = f"toy-eval-{layout}-{d}-s{a.seed}-{p.id.rsplit('-', 1)[1]}"
        out.add(d, problems)
    return out


def _toy_train(d: TrainDraw) -> list[Problem]:
    """Depth range `difficulty` (default 1-3), drawn outside the evaluation share (`--data toy` draws inside)."""
    from prosfi.data.toy import ToyConfig, generate

    depths = _range(d.difficulty, default=(1, 3))
    return generate(ToyConfig(min_depth=depths[0], max_depth=depths[-1], layout=d.layout), d.count, d.seed,
                    split="train")


# ------------------------------------------------------------------ a problems JSONL

def _jsonl_spec(a: SpecArgs) -> Loaded:
    """A problems JSONL; `limit` per (problem.source, difficulty); records that do not validate are skipped."""
    from prosfi.data.problem import read_problems

    if not Path(a.arg).exists():
        raise SpecError(f"--data {a.spec!r}: no such file {a.arg!r}")
    out = Loaded(name=Path(a.arg).stem)
    counts: dict[tuple, int] = {}
    try:
        for p in read_problems(a.arg, validate=False):
            g = (p.source or out.name, None if p.difficulty is None else str(p.difficulty))
            if a.limit is not None and counts.get(g, 0) >= a.limit:
                continue
            try:
                p.validate()
            except ValueError as exc:
                out.skipped.append((p.id, str(exc)))
                continue
            counts[g] = counts.get(g, 0) + 1
            out.add(g, [p])
    except ValueError as exc:
        raise SpecError(f"--data {a.spec!r}: {exc}") from None
    if not out.groups and not out.skipped:
        raise SpecError(f"--data {a.spec!r}: the file has no problems (is it empty?)")
    return out


def _jsonl_train(d: TrainDraw) -> list[Problem]:
    from prosfi.data.problem import read_problems

    out = []
    for problem in read_problems(_need_path(d, "jsonl"), validate=True):
        if len(out) >= d.count:
            break
        out.append(problem)
    return out


# ------------------------------------------------------------------ quantity sources (docs/quantity.md "Data")

def _nothing_read(path: str, what: str, expected: str, skipped) -> UsageError:
    """Nothing written when a file held no usable record (an empty output file with exit 0 looked like
    success)."""
    why = f" ({len(skipped)} skipped; first: {skipped[0][0]}: {skipped[0][1]})" if skipped else ""
    return UsageError(f"{path} holds no usable {what} record{why}; expected JSON lines with {expected}; "
                      "nothing written")


@dataclass(frozen=True)
class GSM8KSettings:
    file: str = field(default="", metadata={
        "help": "a GSM8K JSONL file (question, answer with <<expr=value>> and #### N)", "required": True})
    limit: int | None = field(default=None, metadata={"help": "at most this many records"})


def _gsm8k_load(path: str, limit: int | None) -> Loaded:
    from prosfi.data.gsm8k import LoadReport, load_gsm8k

    report = LoadReport()
    problems = load_gsm8k(path, limit=limit, report=report)
    return Loaded(skipped=_skipped(report.skipped), tail=f" ({report.summary()})").add(None, problems)


def _gsm8k_write(s: GSM8KSettings) -> Loaded:
    out = _gsm8k_load(s.file, s.limit)
    if not out.problems:
        raise _nothing_read(s.file, "GSM8K", "question / answer with #### N", out.skipped)
    out.what = "GSM8K problems"
    return out


def _gsm8k_spec(a: SpecArgs) -> Loaded:
    _spec_file(a, "gsm8k")
    out = _gsm8k_load(a.arg, a.limit)
    out.tail = ""
    return out


@dataclass(frozen=True)
class PhysicsSettings:
    difficulty: str = field(default="easy", metadata={"help": "chain length: easy 1-2 steps, medium 3-4, hard 5-6",
                                                      "choices": PHYSICS_DIFFICULTIES})
    count: int = field(default=100, metadata={"help": "problems to generate"})
    seed: int = field(default=0, metadata={"help": "random seed"})


def _physics_write(s: PhysicsSettings) -> Loaded:
    from prosfi.data.physics import generate

    return Loaded(what=f"physics problems ({s.difficulty})").add(None, generate(s.difficulty, s.count, s.seed))


def _physics_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.physics import generate

    levels = [x.strip() for x in (a.arg or ",".join(PHYSICS_DIFFICULTIES)).split(",") if x.strip()]
    bad = [x for x in levels if x not in PHYSICS_LEVELS]
    if bad or not levels:
        raise SpecError(f"physics:{a.arg}: difficulties are {', '.join(PHYSICS_DIFFICULTIES)} (comma-separated), "
                        "or demo (the quantity CPU demo's task)")
    out = Loaded()
    for level in levels:
        out.add(level, generate(level, a.count, a.seed))
    return out


def _physics_train(d: TrainDraw) -> list[Problem]:
    """Spread over the comma-separated difficulties of `difficulty` (default easy)."""
    from prosfi.data.physics import generate

    out: list[Problem] = []
    for level, share in _spread(d.count, [x.strip() for x in (d.difficulty or "easy").split(",") if x.strip()]):
        if share:
            out.extend(generate(level, share, d.seed))
    return out


@dataclass(frozen=True)
class GSMSymbolicSettings:
    count: int = field(default=100, metadata={"help": "problems to generate"})
    seed: int = field(default=0, metadata={"help": "random seed"})


def _gsms_write(s: GSMSymbolicSettings) -> Loaded:
    from prosfi.data.gsm_symbolic import generate

    skipped: list = []
    problems = generate(s.count, s.seed, skipped=skipped)
    with_gold = sum(1 for p in problems if p.extra.get("gold_steps"))
    return Loaded(skipped=_skipped(skipped), what="GSM-Symbolic problems",
                  tail=f" ({with_gold} with a gold chain)").add(None, problems)


def _gsms_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.gsm_symbolic import generate

    if a.arg and not a.arg.isdigit():
        raise SpecError(f"gsm_symbolic:{a.arg}: give a number of problems, e.g. gsm_symbolic:100")
    n = int(a.arg) if a.arg else a.count
    n = n if a.limit is None else min(n, a.limit)
    skipped: list = []
    problems = generate(n, a.seed, skipped=skipped)
    return Loaded(skipped=_skipped(skipped)).add(None, problems)


def _gsms_train(d: TrainDraw) -> list[Problem]:
    from prosfi.data.gsm_symbolic import generate

    return generate(d.count, d.seed)


def _gsm8k_train(d: TrainDraw) -> list[Problem]:
    from prosfi.data.gsm8k import load_gsm8k

    return load_gsm8k(_need_path(d, "gsm8k"), limit=d.count)


@dataclass(frozen=True)
class SciBenchSettings:
    file: str = field(default="", metadata={"help": "a SciBench JSON file (problem_text, answer_number, unit)",
                                            "required": True})
    symbolic: str = field(default="skip", metadata={
        "help": "records whose unit is a symbolic expression ($m l^2$): skip them (default), or grade the number "
                "that multiplies it, as SciBench does (not unit-checked)", "choices": ("skip", "coefficient")})
    limit: int | None = field(default=None, metadata={"help": "at most this many records"})


def _scibench_write(s: SciBenchSettings) -> Loaded:
    from prosfi.data.scibench import load_scibench

    skipped: list = []
    problems = load_scibench(s.file, limit=s.limit, skipped=skipped, symbolic=s.symbolic)
    if not problems:
        raise _nothing_read(s.file, "SciBench", "problem_text / answer_number / unit", skipped)
    return Loaded(skipped=_skipped(skipped), what="SciBench problems").add(None, problems)


def _scibench_spec(a: SpecArgs) -> Loaded:
    from prosfi.data.scibench import load_scibench

    _spec_file(a, "scibench")
    skipped: list = []
    problems = load_scibench(a.arg, limit=a.limit, skipped=skipped)
    return Loaded(skipped=_skipped(skipped)).add(None, problems)


# ------------------------------------------------------------------ the registry, in the order the docs list it

LOGIC_TF = ("true_false_uncertain",)
for _source in (
    DataSource("jsonl", "a problems JSONL (`prosfi data ...` output); group (problem.source, difficulty)",
               spec="PATH.jsonl jsonl:PATH", read_spec=_jsonl_spec, train=_jsonl_train, file=True, needs_path=True),
    DataSource("kk", "Knights & Knaves puzzles: generate (seeded) or load from the hub (`prosfi data kk --hub`)",
               ("assignment",), settings=KKSettings, write=_kk_write, spec="kk:2..8 kk:3 kk:2,4",
               read_spec=_kk_spec, train=_kk_train, difficulty_help="people per puzzle, e.g. '2' or '3-5'", level="people",
               widen="people counts, e.g. '2-4'"),
    DataSource("fol", "ProverQA-style problems from the offline generator, by difficulty (easy medium hard extra)",
               LOGIC_TF, ("proverqa_gen",), settings=FolSettings, write=_fol_write,
               spec="fol:hard fol:easy,medium fol:easy..extra fol:all", read_spec=_fol_spec, train=_fol_train,
               difficulty_help="easy, medium or hard"),
    DataSource("proverqa", "ProverQA from the hub (opendatalab/ProverQA) or a local copy; its dev splits for eval",
               LOGIC_TF, ("proverqa_hub",), settings=ProverQASettings, write=_proverqa_write,
               spec="proverqa:hard=FILE proverqa:hard", read_spec=_proverqa_spec, train=_proverqa_train, file=True,
               offline=False, difficulty_help="the split: easy, medium or hard", hub_cache=_proverqa_hub_cache),
    DataSource("kkhub", "K&K in the hub's JSONL format (K-and-K/knights-and-knaves): a local file, or a number "
               "for that test file", ("assignment",), ("kk_hub",), spec="kkhub:FILE kkhub:3",
               read_spec=_kkhub_spec, column="kk_hub", level="people"),
    DataSource("rgkk", "reasoning-gym's knights_knaves, in each puzzle's own role words", ("assignment",),
               spec="rgkk:2..7 rgkk:3", read_spec=_rgkk_spec, level="people"),
    DataSource("folio", "FOLIO JSONL (premises-FOL / conclusion-FOL / label)", LOGIC_TF, spec="folio:FILE",
               read_spec=_folio_spec),
    DataSource("toy", "the CPU demo's toy rule chains (prosfi.data.toy); eval draws from the share training never draws from",
               LOGIC_TF, settings=ToySettings, write=_toy_write, spec="toy toy:1..3 toy:2,shuffled",
               read_spec=_toy_spec, train=_toy_train, difficulty_help="rules per chain, e.g. '1-3'"),
    DataSource("gsm8k", "GSM8K in its public JSONL format (question / answer with `<<expr=value>>` and "
               "`#### N`) -> quantity problems with gold chains", ("quantity",), settings=GSM8KSettings, write=_gsm8k_write, spec="gsm8k:FILE",
               read_spec=_gsm8k_spec, train=_gsm8k_train, file=True, needs_path=True,
               path_hint="GSM8K's train split is grade_school_math/data/train.jsonl in "
               "github.com/openai/grade-school-math (MIT); copy it there or give its path as dataset_path"),
    DataSource("physics", "physics problems with units (kinematics, energy, circuits, gas law), generated "
               "offline (easy medium hard; demo: the quantity CPU demo's task)", ("quantity",), settings=PhysicsSettings, write=_physics_write,
               spec="physics:easy physics:easy,medium,hard physics:demo", read_spec=_physics_spec,
               train=_physics_train, difficulty_help="easy, medium, hard or a comma list"),
    DataSource("gsm_symbolic", "GSM-Symbolic templates through reasoning-gym (answers checked)", ("quantity",),
               settings=GSMSymbolicSettings, write=_gsms_write, spec="gsm_symbolic:N", read_spec=_gsms_spec,
               train=_gsms_train, offline=False),
    DataSource("scibench", "SciBench in its public JSON format (problem_text / answer_number / LaTeX unit; "
               "evaluation, no gold chains)",
               ("quantity",), settings=SciBenchSettings, write=_scibench_write, spec="scibench:FILE",
               read_spec=_scibench_spec),
):
    register(_source)
del _source

__all__ = ["ALIASES", "SOURCES", "DataSource", "Loaded", "SpecArgs", "SpecError", "TrainDraw", "folio_label_notes",
           "get", "known_names", "level_name", "names", "register", "resolve_name", "settings_fields", "sources_table"]
