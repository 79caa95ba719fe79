"""The Problem schema shared by data, rewards, training and evaluation (DESIGN.md "Problem").

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
        return self.options.get(self.answer, self.answer)

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
            assignment={str(k): bool(v) for k, v in (d.get("assignment") or {}).items()},
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


def read_problems(path: str | Path) -> Iterator[Problem]:
    """Yield problems from a JSONL file; a bad line raises ValueError naming the file and line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield Problem.from_dict(json.loads(line))
            except (ValueError, json.JSONDecodeError) as exc:
                raise ValueError(f"{path}:{lineno}: {exc}") from None


def write_problems(problems: Iterable[Problem], path: str | Path) -> int:
    """Write problems as JSONL (UTF-8, stable key order). Returns the count."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for p in problems:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n
