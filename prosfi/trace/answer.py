"""Read the `<answer>` block against a problem: a label for True/False/Uncertain problems, one
literal per atom for Knights & Knaves assignments.

An answer we cannot read is a wrong answer with a reason (not a format failure): the layout was
right, the content was not. Reading is forgiving about case, spacing, numbering and separators,
and strict about content: every atom exactly once, no unknown names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prosfi.data.problem import DEFAULT_OPTIONS, Problem
from prosfi.trace.extract import clip

_OPPOSITE_ROLE = {"knight": "knave", "knave": "knight"}
_ATOM = re.compile(r"^\s*([^\W\d][\w']*)\s+([^\W\d][\w']*)\s*$")


def _claim_pattern(words: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"([^\W\d][\w'-]*)\s+is\s+(not\s+)?(?:an?\s+)?({alternatives})s?\b", re.IGNORECASE)


_CLAIM = _claim_pattern(("knight", "knave"))


def _roles(problem: Problem) -> dict[str, bool]:
    """Role word -> truth-teller? knight/knave always; the puzzle's own words (`extra["roles"]`) too."""
    words = {"knight": True, "knave": False}
    roles = problem.extra.get("roles")
    if isinstance(roles, dict):
        for key, value in (("knight", True), ("knave", False)):
            word = roles.get(key)
            if isinstance(word, str) and word.strip() and word.strip().lower() not in words:
                words[word.strip().lower()] = value
    return words


@dataclass(frozen=True)
class ParsedAnswer:
    """`label` ("True"/"False"/"Uncertain") or `literals` (atom -> truth value); `reason` when unreadable."""

    label: str | None = None
    literals: dict[str, bool] = field(default_factory=dict)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason

    def formulas(self) -> list[str]:
        """The literals as formula text, in atom order: `Knight zoey` or `¬ Knight zoey`."""
        return [atom if value else f"¬ {atom}" for atom, value in self.literals.items()]

    def render(self) -> str:
        if self.label is not None:
            return self.label
        return " ".join(f"{a}={'T' if v else 'F'}" for a, v in self.literals.items())


def parse_answer(problem: Problem, text: str) -> ParsedAnswer:
    if problem.kind == "assignment":
        return _parse_assignment(problem, text)
    return _parse_label(problem, text)


def answer_correct(problem: Problem, parsed: ParsedAnswer) -> bool:
    if not parsed.ok:
        return False
    if problem.kind == "assignment":
        gold = problem.assignment
        return bool(gold) and parsed.literals == {a: bool(gold.get(a)) for a in problem.atoms} and set(
            gold) == set(problem.atoms)
    return parsed.label is not None and parsed.label == problem.answer_label


# "Answer: (B) False", "B) False", "B. False", "(B)": a letter, optionally followed by its own option text
_LETTER_FORM = re.compile(r"^(?:answer\s*:\s*)?\(?\s*([A-Za-z])\s*(?:\)|\.|:)?\s*(.*?)\s*\.?$", re.IGNORECASE)


def _parse_label(problem: Problem, text: str) -> ParsedAnswer:
    options = problem.options or DEFAULT_OPTIONS
    given = text.strip()
    bare = re.sub(r"^answer\s*:\s*", "", given, flags=re.IGNORECASE).rstrip(".").strip()  # "Answer: True."
    for letter, label in options.items():
        if bare.casefold() == str(label).casefold():
            return ParsedAnswer(label=str(label))
        if given.casefold() in (letter.casefold(), str(label).casefold()):
            return ParsedAnswer(label=str(label))
    m = _LETTER_FORM.match(given)
    if m:  # a letter with decoration; any text after it must be that option's own text
        by_letter = {k.casefold(): str(v) for k, v in options.items()}
        label = by_letter.get(m.group(1).casefold())
        if label is not None and m.group(2).casefold() in ("", label.casefold()):
            return ParsedAnswer(label=label)
    choices = ", ".join(f"{k} ({v})" for k, v in options.items())
    return ParsedAnswer(reason=f"answer {clip(given)!r} is not one of {choices}")


def _parse_assignment(problem: Problem, text: str) -> ParsedAnswer:
    by_name: dict[str, tuple[str, str]] = {}  # lower-case name -> (atom, role word of the atom)
    for atom in problem.atoms:
        m = _ATOM.match(atom)
        if not m or m.group(1).lower() not in _OPPOSITE_ROLE:
            return ParsedAnswer(reason=f"cannot read atom {atom!r} of the problem as `Knight name`")
        by_name[_name_key(m.group(2))] = (atom, m.group(1).lower())
    values: dict[str, bool] = {}
    words = _roles(problem)
    pattern = _CLAIM if len(words) == 2 else _claim_pattern(tuple(words))
    for m in pattern.finditer(text):
        name, negated, role = _name_key(m.group(1)), bool(m.group(2)), m.group(3).lower()
        if name not in by_name:
            return ParsedAnswer(reason=f"answer names {m.group(1)!r}, who is not in the problem")
        atom, atom_role = by_name[name]
        if atom in values:
            return ParsedAnswer(reason=f"answer assigns {m.group(1)!r} more than once")
        values[atom] = (words[role] == words[atom_role]) != negated
    missing = [a for a in problem.atoms if a not in values]
    if missing:
        return ParsedAnswer(reason=f"answer does not assign {', '.join(missing)}")
    return ParsedAnswer(literals={a: values[a] for a in problem.atoms})


def _name_key(name: str) -> str:
    """`Mary-Ann` and the constant `maryann` meet here: lower-case ASCII letters, digits and `_`
    (the rule prosfi.data.kk uses to turn a name into a constant)."""
    return re.sub(r"[^a-z0-9_]", "", name.lower())


__all__ = ["ParsedAnswer", "answer_correct", "parse_answer"]
