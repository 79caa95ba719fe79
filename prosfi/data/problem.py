"""The Problem schema shared by data, rewards, training and evaluation (docs/data.md).

Three kinds:
- `true_false_uncertain` (ProverQA): `goal` formula, `options` letter -> "True"/"False"/"Uncertain",
  `answer` a letter.
- `assignment` (Knights & Knaves): `atoms` formulas and the gold `assignment` atom -> bool.
- `quantity` (GSM8K, GSM-Symbolic, physics, SciBench; docs/quantity.md "Data"): `givens` (id g1..gn, value,
  unit, the text span it came from), `target` (name, unit) and `answer` a dict {"value", "unit"};
  `premises` is optional (empty) for it.
Extra fields are kept in `extra` and written back out unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The one list of problem kinds, each with the name of the domain that reads it. `prosfi.domains` routes problems
# by it and gives each built-in domain its `kinds` from it; a domain added at run time adds its own through
# `register_kind` (`prosfi.domains.register`). Data sits below the domains, so they are named, not imported.
KINDS: dict[str, str] = {"true_false_uncertain": "logic", "assignment": "logic", "quantity": "quantity"}
DEFAULT_OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}  # ProverQA's options


def kinds_of(domain: str) -> tuple[str, ...]:
    """The kinds the domain called `domain` reads, in KINDS order."""
    return tuple(k for k, d in KINDS.items() if d == domain)


def register_kind(kind: str, domain: str) -> None:
    """Make `kind` a known problem kind, read by `domain`; a kind another domain reads is a ValueError."""
    owner = KINDS.get(kind)
    if owner is not None and owner != domain:
        raise ValueError(f"kind {kind} belongs to domain {owner!r} already")
    KINDS[kind] = domain


@dataclass(frozen=True)
class Premise:
    id: str
    formal: str
    text: str = ""


@dataclass
class Problem:
    id: str
    kind: str
    premises: list[Premise]
    source: str = ""
    context: str = ""
    question: str = ""
    goal: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    answer: Any = None  # an option letter (true_false_uncertain) or {"value", "unit"} (quantity)
    atoms: list[str] = field(default_factory=list)
    assignment: dict[str, bool] = field(default_factory=dict)
    difficulty: Any = None
    givens: list[dict[str, Any]] = field(default_factory=list)
    target: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = (
        "id", "kind", "premises", "source", "context", "question", "goal", "options", "answer",
        "atoms", "assignment", "difficulty", "givens", "target",
    )

    @property
    def given_map(self) -> dict[str, dict[str, Any]]:
        """For quantity: given id -> the given's record, in order."""
        return {str(g["id"]): g for g in self.givens}

    @property
    def premise_map(self) -> dict[str, str]:
        """Premise id -> formal text, in order."""
        return {p.id: p.formal for p in self.premises}

    @property
    def answer_label(self) -> str | None:
        """For true_false_uncertain: "True" / "False" / "Uncertain" (the option text of `answer`)."""
        if self.kind != "true_false_uncertain" or self.answer is None:
            return None
        return (self.options or DEFAULT_OPTIONS).get(self.answer, self.answer)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Problem:
        """Build from a JSON object. Raises ValueError naming the field on a malformed record."""
        if not isinstance(d, dict):
            raise ValueError("a problem must be a JSON object")
        for key in ("id", "kind"):
            if key not in d:
                raise ValueError(f"missing field {key!r}")
        if d["kind"] not in KINDS:
            raise ValueError(f"field 'kind': {d['kind']!r} is not one of {', '.join(KINDS)}")
        if d["kind"] != "quantity" and "premises" not in d:
            raise ValueError("missing field 'premises'")
        d = d if "premises" in d else {**d, "premises": []}
        if not isinstance(d["premises"], list):
            raise ValueError("field 'premises' must be a list")
        premises = []
        for i, p in enumerate(d["premises"]):
            if not isinstance(p, dict) or "id" not in p or "formal" not in p:
                raise ValueError(f"field 'premises[{i}]' needs 'id' and 'formal'")
            premises.append(Premise(id=str(p["id"]), formal=str(p["formal"]), text=str(p.get("text", ""))))
        extra = {k: v for k, v in d.items() if k not in cls._KNOWN}
        return cls(
            id=str(d["id"]),
            kind=d["kind"],
            premises=premises,
            source=d.get("source", ""),
            context=d.get("context", ""),
            question=d.get("question", ""),
            goal=d.get("goal"),
            options=dict(d.get("options") or {}),
            answer=d.get("answer"),
            atoms=list(d.get("atoms") or []),
            assignment=_assignment(d.get("assignment")),
            difficulty=d.get("difficulty"),
            givens=_givens(d.get("givens")),
            target=_target(d.get("target")),
            extra=extra,
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "context": self.context,
            "question": self.question,
            "premises": [{"id": p.id, "text": p.text, "formal": p.formal} for p in self.premises],
        }
        if self.kind == "true_false_uncertain":
            d.update(goal=self.goal, options=self.options, answer=self.answer)
        elif self.kind == "quantity":
            d.update(givens=self.givens, target=self.target, answer=self.answer)
        else:
            d.update(atoms=self.atoms, assignment=self.assignment)
        d["difficulty"] = self.difficulty
        d.update(self.extra)
        return d


    def validate(self) -> None:
        """Check the record is usable: every formula parses, ids are unique, the answer fits the kind.

        Raises ValueError whose message starts with the offending field, e.g.
        ``field 'premises[2].formal': ...``. Needs `prosfi.logic` (imported here, not at module load);
        quantity problems need `prosfi.quant` instead.
        """
        if self.kind == "quantity":
            return self._validate_quantity()
        from prosfi.logic import FormulaError, check_signature, parse

        if not self.id:
            raise ValueError("field 'id': must be a non-empty string")
        if not self.premises:
            raise ValueError("field 'premises': must not be empty")
        formulas = []

        def _parse(field_name: str, text: Any):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"field {field_name!r}: must be a non-empty formula string")
            try:
                f = parse(text)
            except FormulaError as exc:
                raise ValueError(f"field {field_name!r}: does not parse: {exc}") from None
            formulas.append(f)
            return f

        seen: set[str] = set()
        for i, p in enumerate(self.premises):
            if not p.id:
                raise ValueError(f"field 'premises[{i}].id': must be a non-empty string")
            if p.id in seen:
                raise ValueError(f"field 'premises[{i}].id': duplicate premise id {p.id!r}")
            seen.add(p.id)
            _parse(f"premises[{i}].formal", p.formal)
        if self.kind == "true_false_uncertain":
            _parse("goal", self.goal)
            if not self.options:
                raise ValueError("field 'options': must map option letters to True/False/Uncertain")
            bad = sorted(v for v in self.options.values() if v not in ANSWER_LABELS)
            if bad:
                raise ValueError(f"field 'options': {bad[0]!r} is not one of {', '.join(ANSWER_LABELS)}")
            if self.answer not in self.options:
                raise ValueError(f"field 'answer': {self.answer!r} is not one of the option letters "
                                 f"{', '.join(sorted(self.options))}")
        else:
            if not self.atoms:
                raise ValueError("field 'atoms': must list the atoms to assign")
            if len(set(self.atoms)) != len(self.atoms):
                raise ValueError("field 'atoms': contains duplicates")
            for i, a in enumerate(self.atoms):
                _parse(f"atoms[{i}]", a)
            missing = [a for a in self.atoms if a not in self.assignment]
            if missing:
                raise ValueError(f"field 'assignment': no value for atom {missing[0]!r}")
            unknown = sorted(set(self.assignment) - set(self.atoms))
            if unknown:
                raise ValueError(f"field 'assignment': {unknown[0]!r} is not one of the atoms")
        try:
            check_signature(formulas)
        except (FormulaError, ValueError) as exc:
            raise ValueError(f"field 'premises': inconsistent signature: {exc}") from None

    def _validate_quantity(self) -> None:
        """Givens parse as quantities with unique ids, the target unit and the answer parse and agree."""
        from prosfi.quant import QuantError, parse_quantity, parse_unit

        if not self.id:
            raise ValueError("field 'id': must be a non-empty string")
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError("field 'question': must be a non-empty string")
        seen: set[str] = set()
        for i, g in enumerate(self.givens):
            gid = str(g.get("id", ""))
            if not gid:
                raise ValueError(f"field 'givens[{i}].id': must be a non-empty string")
            if gid in seen:
                raise ValueError(f"field 'givens[{i}].id': duplicate given id {gid!r}")
            seen.add(gid)
            try:
                parse_quantity({"value": g.get("value"), "unit": g.get("unit") or ""})
            except (QuantError, TypeError, ValueError) as exc:
                raise ValueError(f"field 'givens[{i}]': does not parse as a quantity: {exc}") from None
        if not isinstance(self.answer, dict) or "value" not in self.answer:
            raise ValueError("field 'answer': must be an object {\"value\", \"unit\"}")
        try:
            answer = parse_quantity({"value": self.answer["value"], "unit": self.answer.get("unit") or ""})
        except (QuantError, TypeError, ValueError) as exc:
            raise ValueError(f"field 'answer': does not parse as a quantity: {exc}") from None
        if self.target:
            try:
                parse_unit(str(self.target.get("unit") or ""))
                unit = parse_quantity({"value": "1", "unit": str(self.target.get("unit") or "")})
            except (QuantError, TypeError, ValueError) as exc:
                raise ValueError(f"field 'target.unit': does not parse: {exc}") from None
            if _dimensionality(answer) != _dimensionality(unit):
                raise ValueError(f"field 'answer': unit {self.answer.get('unit')!r} does not match the target "
                                 f"unit {self.target.get('unit')!r}")
        for i, p in enumerate(self.premises):
            if not p.id:
                raise ValueError(f"field 'premises[{i}].id': must be a non-empty string")


def _dimensionality(q: Any) -> Any:
    return getattr(q, "dims", getattr(q, "dimensionality", None))


ANSWER_LABELS = ("True", "False", "Uncertain")


def _givens(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("field 'givens' must be a list of {id, value, unit, text}")
    out = []
    for i, g in enumerate(raw):
        if not isinstance(g, dict) or "id" not in g or "value" not in g:
            raise ValueError(f"field 'givens[{i}]' needs 'id' and 'value'")
        out.append(dict(g))
    return out


def _target(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError("field 'target' must be an object {name, unit}")
    return dict(raw)


def _assignment(raw: Any) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError("field 'assignment' must be an object atom -> true/false")
    for k, v in raw.items():
        if not isinstance(v, bool):
            raise ValueError(f"field 'assignment[{k!r}]': {v!r} is not true/false")
    return {str(k): v for k, v in raw.items()}


def read_problems(path: str | Path, validate: bool = False) -> Iterator[Problem]:
    """Yield problems from a JSONL file; a bad line raises ValueError naming the file and line.

    With `validate=True` each problem is also checked with `Problem.validate` (formulas parse, …).
    """
    from prosfi.jsonl import loads, read_lines

    with open(path, "rb") as fh:
        for lineno, line, bad_bytes in read_lines(fh):
            if bad_bytes:
                raise ValueError(f"{path}:{lineno}: {bad_bytes}")
            if not line.strip():
                continue
            data, why = loads(line)
            if why is not None:
                raise ValueError(f"{path}:{lineno}: not valid JSON: {why}")
            try:
                problem = Problem.from_dict(data)
                if validate:
                    problem.validate()
            except (ValueError, TypeError, RecursionError) as exc:
                raise ValueError(f"{path}:{lineno}: {exc}") from None
            yield problem


def write_problems(problems: Iterable[Problem], path: str | Path) -> int:
    """Write problems as JSONL (UTF-8, stable key order). Returns the count."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for p in problems:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def problem_id(family: str, level: Any, seed: int, index: int, config: Any = None, level_field: str = "") -> str:
    """The id of a generated problem: what drew it (family, level, seed, the generator's other settings) and its
    place in the draw. A generator is deterministic in these, so the id identifies the problem; without the
    seed, a re-draw with another seed would restart at the same ids and two different problems would share
    one (a right answer scored against the wrong problem). `config` (a dataclass): settings other than the
    default, apart from `level_field`, add a short digest (`kk-3-c1a2b3c-s0-0000`)."""
    return f"{family}-{level}{config_tag(config, level_field)}-s{seed}-{index:04d}"


def config_tag(config: Any, level_field: str = "") -> str:
    """'' for a generator config at its defaults (the level aside), else '-c' + 6 hex digits of the rest."""
    import dataclasses
    import hashlib

    if config is None:
        return ""
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name != level_field}
    defaults = {k: getattr(type(config)(), k) for k in values}
    changed = {k: v for k, v in values.items() if v != defaults[k]}
    if not changed:
        return ""
    text = json.dumps({k: repr(v) for k, v in sorted(changed.items())})
    return "-c" + hashlib.sha1(text.encode()).hexdigest()[:6]


_DRAWN = re.compile(r"^(?P<draw>.+)-s(?P<seed>\d+)-(?P<index>\d+)$")


def unknown_ids_note(unknown: Sequence[str], known: Iterable[str]) -> str:
    """One line on completions whose `problem_id` is not among the problems: how many, the first, and for
    generated ids (`problem_id`) why: the same generator drawn with another seed, or past the end of the
    draw. '' when nothing is unknown. Such completions are never scored against a problem of the same name."""
    unknown = [str(u) for u in unknown]
    if not unknown:
        return ""
    seeds: dict[str, set[str]] = {}
    for k in known:
        m = _DRAWN.match(str(k))
        if m:
            seeds.setdefault(m["draw"], set()).add(m["seed"])
    theirs: dict[str, set[str]] = {}
    later = 0
    for u in unknown:
        m = _DRAWN.match(u)
        if m and m["draw"] in seeds:
            if m["seed"] in seeds[m["draw"]]:
                later += 1
            else:
                theirs.setdefault(m["draw"], set()).add(m["seed"])
    note = (f"{len(unknown)} completion(s) name a problem id not among the problems (first {unknown[0]!r}); "
            "not scored")
    for draw, got in sorted(theirs.items()):
        note += (f"; {draw} completions were drawn with seed {', '.join(sorted(got, key=int))}, these problems "
                 f"with seed {', '.join(sorted(seeds[draw], key=int))} (the same seed gives the same problems)")
    if later:
        note += f"; {later} are later problems of the same draw (more than were drawn: a larger --count?)"
    return note
