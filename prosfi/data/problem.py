"""The Problem schema shared by data, rewards, training and evaluation (docs/data.md).

Two kinds:
- `true_false_uncertain` (ProverQA): `goal` formula, `options` letter -> "True"/"False"/"Uncertain",
  `answer` a letter.
- `assignment` (Knights & Knaves): `atoms` formulas and the gold `assignment` atom -> bool.
Extra fields are kept in `extra` and written back out unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

KINDS = ("true_false_uncertain", "assignment")
DEFAULT_OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}  # ProverQA's options


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
    answer: str | None = None
    atoms: list[str] = field(default_factory=list)
    assignment: dict[str, bool] = field(default_factory=dict)
    difficulty: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = (
        "id", "kind", "premises", "source", "context", "question", "goal", "options", "answer",
        "atoms", "assignment", "difficulty",
    )

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
    def from_dict(cls, d: dict[str, Any]) -> "Problem":
        """Build from a JSON object. Raises ValueError naming the field on a malformed record."""
        if not isinstance(d, dict):
            raise ValueError("a problem must be a JSON object")
        for key in ("id", "kind", "premises"):
            if key not in d:
                raise ValueError(f"missing field {key!r}")
        if d["kind"] not in KINDS:
            raise ValueError(f"field 'kind': {d['kind']!r} is not one of {', '.join(KINDS)}")
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
        else:
            d.update(atoms=self.atoms, assignment=self.assignment)
        d["difficulty"] = self.difficulty
        d.update(self.extra)
        return d


    def validate(self) -> None:
        """Check the record is usable: every formula parses, ids are unique, the answer fits the kind.

        Raises ValueError whose message starts with the offending field, e.g.
        ``field 'premises[2].formal': ...``. Needs `prosfi.logic` (imported here, not at module load).
        """
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


ANSWER_LABELS = ("True", "False", "Uncertain")


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
