"""FOLIO (Han et al. 2022; yale-nlp/FOLIO) records as Problems.

FOLIO ships JSONL, one conclusion per line: `story_id`, `example_id`, `premises` and `premises-FOL`
(newline-separated strings in v2, lists in v1), `conclusion`, `conclusion-FOL`, and `label`
(`True` / `False` / `Uncertain`; v1 wrote `Unknown`). Its FOL is ProverQA's notation
(`∀x (Drinks(x) → Dependent(x))`, `¬`, `∧`, `∨`, `⊕`, `→`, `↔`, `∃`) with names in any script, so
we turn every non-ASCII identifier into an ASCII one (accents dropped, other characters spelled
`uXXXX`, kept distinct per record) and reuse `prosfi.data.fol`. A record that does not parse or
type-check (equality, a predicate used at two arities, a free variable ...) is skipped with the
reason. FOLIO's own FOL has known annotation errors: compare its labels with the verifier's
(`prosfi.data.labels.verified_labels`; `prosfi eval` reports the disagreements).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from prosfi.data.fol import FOLSyntaxError, fol_to_lean
from prosfi.data.problem import DEFAULT_OPTIONS, Premise, Problem

LABELS = {"true": "True", "false": "False", "uncertain": "Uncertain", "unknown": "Uncertain"}
_IDENT = re.compile(r"[^\W\d][\w'\-]*")
_LETTER = {v: k for k, v in DEFAULT_OPTIONS.items()}


def ascii_identifier(name: str) -> str:
    """`Böhm` -> `Bohm`; `東京` -> `u6771u4eac`: a name prosfi's ASCII-only FOL reader accepts."""
    if name.isascii():
        return name
    out = []
    for ch in unicodedata.normalize("NFKD", name):
        if ch.isascii():
            out.append(ch)
        elif unicodedata.combining(ch):
            continue
        else:
            out.append(f"u{ord(ch):04x}")
    text = "".join(out)
    return text if text and not text[0].isdigit() else "c_" + text


class _Names:
    """One record's identifier map: non-ASCII names get ASCII spellings that collide with nothing."""

    def __init__(self, texts: list[str]):
        self.map: dict[str, str] = {}
        names = {m.group(0) for t in texts for m in _IDENT.finditer(t)}
        taken = {n for n in names if n.isascii()}
        for name in sorted(n for n in names if not n.isascii()):
            base = candidate = ascii_identifier(name)
            i = 1
            while candidate in taken:
                i += 1
                candidate = f"{base}_{i}"
            taken.add(candidate)
            self.map[name] = candidate

    def __call__(self, text: str) -> str:
        if not self.map:
            return text
        return _IDENT.sub(lambda m: self.map.get(m.group(0), m.group(0)), text)


def _lines(value: Any, field: str) -> list[str]:
    if isinstance(value, str):
        return [x.strip() for x in value.splitlines() if x.strip()]
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return [x.strip() for x in value if x.strip()]
    raise ValueError(f"field {field!r}: expected a string or a list of strings")


def folio_to_lean(text: str, names: _Names | None = None) -> str:
    """One FOLIO formula -> Lean text (raises FOLSyntaxError, e.g. for equality, which we do not read)."""
    text = text.strip().rstrip(".")
    if "=" in text or "≠" in text:
        raise FOLSyntaxError(f"equality is not supported in FOLIO formulas: {text!r}")
    return fol_to_lean((names or _Names([text]))(text))


def problem_from_folio_record(rec: dict[str, Any], index: int = 0) -> Problem:
    """Map one FOLIO record; ValueError naming the field when it cannot be formalised."""
    if not isinstance(rec, dict):
        raise ValueError("a FOLIO record must be a JSON object")  # noqa: TRY004 - a bad record, skipped
    for key in ("premises-FOL", "conclusion-FOL", "label"):
        if rec.get(key) in (None, "", []):
            raise ValueError(f"missing field {key!r}")
    fols = _lines(rec["premises-FOL"], "premises-FOL")
    texts = _lines(rec.get("premises") or [], "premises")
    if len(texts) != len(fols):
        texts = [""] * len(fols)  # NL and FOL premises do not pair up: keep the formulas only
    label = LABELS.get(str(rec["label"]).strip().lower())
    if label is None:
        raise ValueError(f"field 'label': {rec['label']!r} is not True, False or Uncertain")
    conclusion_fol = str(rec["conclusion-FOL"])
    names = _Names(fols + [conclusion_fol])
    premises: list[Premise] = []
    seen: set[str] = set()
    for i, (fol, text) in enumerate(zip(fols, texts)):
        try:
            formal = folio_to_lean(fol, names)
        except FOLSyntaxError as exc:
            raise ValueError(f"field 'premises-FOL[{i}]': {exc}") from None
        if formal in seen:
            continue
        seen.add(formal)
        premises.append(Premise(id=f"h{len(premises) + 1}", formal=formal, text=text))
    try:
        goal = folio_to_lean(conclusion_fol, names)
    except FOLSyntaxError as exc:
        raise ValueError(f"field 'conclusion-FOL': {exc}") from None
    ident = rec.get("example_id", rec.get("id"))
    pid = f"folio-{ident}" if ident is not None else f"folio-{rec.get('story_id', 's')}-{index:04d}"
    problem = Problem(
        id=pid, kind="true_false_uncertain", premises=premises, source="folio",
        context=" ".join(t for t in texts if t), question=str(rec.get("conclusion", "")).strip(),
        goal=goal, options=dict(DEFAULT_OPTIONS), answer=_LETTER[label], difficulty=None,
        extra={"story_id": rec.get("story_id"), "example_id": rec.get("example_id"),
               **({"renamed": names.map} if names.map else {})},
    )
    problem.validate()  # formulas parse and type-check (one arity per predicate), ids fit
    return problem


def load_folio(path: str | Path, limit: int | None = None, skipped: list | None = None) -> list[Problem]:
    """Problems from a FOLIO JSONL (or JSON list) file. Records that cannot be formalised are left out;
    pass a list as `skipped` to receive (record index, reason) pairs."""
    from prosfi.data.hub import read_records

    problems: list[Problem] = []
    seen: set[str] = set()
    for i, rec in enumerate(read_records(path)):
        if limit is not None and len(problems) >= limit:
            break
        try:
            p = problem_from_folio_record(rec, i)
            if p.id in seen:
                p.id = f"{p.id}-{i}"
        except ValueError as exc:
            if skipped is not None:
                skipped.append((i, str(exc)))
            continue
        seen.add(p.id)
        problems.append(p)
    return problems


__all__ = ["ascii_identifier", "folio_to_lean", "load_folio", "problem_from_folio_record"]
