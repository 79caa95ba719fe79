"""The public ProverQA records (opendatalab/ProverQA) as Problems.

Premises are the `nl2fol` entries in insertion order (h1..hn), translated to Lean syntax; the goal
is `conclusion_fol`. A formula that occurs twice (ProverQA has a few duplicated premises) is kept
once so that one fact never has two ids.
"""

from __future__ import annotations

import json
import re
from typing import Any

from prosfi.data.fol import FOLSyntaxError, fol_to_lean
from prosfi.data.problem import DEFAULT_OPTIONS, Premise, Problem

PROVERQA_REPO = "opendatalab/ProverQA"
SPLITS = {"easy": "dev/easy.json", "medium": "dev/medium.json", "hard": "dev/hard.json",
          "train": "train/provergen-5000.json"}
_OPTION = re.compile(r"^\s*([A-Z])\s*[).:]\s*(.+?)\s*$")


def parse_options(raw: Any) -> dict[str, str]:
    """`["A) True", "B) False", "C) Uncertain"]` (or a dict) -> {"A": "True", …}."""
    if raw is None:
        return dict(DEFAULT_OPTIONS)
    if isinstance(raw, dict):
        return {str(k).strip(): str(v).strip() for k, v in raw.items()}
    out = {}
    for item in raw:
        m = _OPTION.match(str(item))
        if not m:
            raise ValueError(f"field 'options': cannot read option {item!r}")
        out[m.group(1)] = m.group(2).rstrip(".").capitalize()
    return out


def problem_from_proverqa_record(rec: dict[str, Any], difficulty: str, pid: str | None = None) -> Problem:
    """Map one ProverQA dev record; ValueError naming the field when it cannot be formalised."""
    for key in ("nl2fol", "conclusion_fol", "answer"):
        if rec.get(key) in (None, ""):
            raise ValueError(f"ProverQA record {rec.get('id')!r} has no {key!r} (the train file has no "
                             f"formal premises; use the dev splits)")
    nl2fol = rec["nl2fol"]
    if isinstance(nl2fol, str):
        nl2fol = json.loads(nl2fol)
    if not isinstance(nl2fol, dict):
        raise ValueError("field 'nl2fol': expected an object sentence -> formula")
    premises: list[Premise] = []
    seen: dict[str, str] = {}
    dropped = 0
    for i, (sentence, fol) in enumerate(nl2fol.items()):
        if fol is None:  # an Arrow struct fills other records' keys with None
            continue
        try:
            formal = fol_to_lean(fol)
        except FOLSyntaxError as exc:
            raise ValueError(f"field 'nl2fol[{i}]' ({sentence!r}): {exc}") from None
        if formal in seen:
            dropped += 1
            continue
        seen[formal] = sentence
        premises.append(Premise(id=f"h{len(premises) + 1}", formal=formal, text=sentence.strip()))
    try:
        goal = fol_to_lean(rec["conclusion_fol"])
    except FOLSyntaxError as exc:
        raise ValueError(f"field 'conclusion_fol': {exc}") from None
    options = parse_options(rec.get("options"))
    answer = str(rec["answer"]).strip().rstrip(")").strip()
    if answer not in options:
        raise ValueError(f"field 'answer': {answer!r} is not one of {sorted(options)}")
    hub_id = rec.get("id")
    pid = pid or f"pqa-{difficulty}-{int(hub_id) if isinstance(hub_id, int) else 0:04d}"
    extra: dict[str, Any] = {"hub_id": hub_id}
    if rec.get("reasoning"):
        extra["reasoning"] = rec["reasoning"]
    if dropped:
        extra["duplicate_premises_dropped"] = dropped
    return Problem(
        id=pid, kind="true_false_uncertain", premises=premises, source="proverqa",
        context=str(rec.get("context", "")).strip(), question=str(rec.get("question", "")).strip(),
        goal=goal, options=options, answer=answer, difficulty=difficulty, extra=extra,
    )


def load_proverqa(split: str, path: str | None = None, limit: int | None = None,
                  endpoint: str | None = None, skipped: list | None = None) -> list[Problem]:
    """ProverQA problems from a local file (`path`) or the hub; `split` in easy/medium/hard/train.

    A record that cannot be formalised is left out; pass a list as `skipped` to receive
    (record index, reason) pairs. If no record maps, the first reason is raised.
    """
    from prosfi.data.hub import load_hub_records, read_records

    if split not in SPLITS:
        raise ValueError(f"split: {split!r} is not one of {', '.join(SPLITS)}")
    unreadable: list = []
    if path:
        records = read_records(path, unreadable)  # lines that are not JSON objects are skipped, not fatal
    else:
        records = load_hub_records(PROVERQA_REPO, SPLITS[split], endpoint=endpoint)
    problems, failures = [], []
    for i, rec in enumerate(records):
        if limit is not None and len(problems) >= limit:
            break
        try:
            problems.append(problem_from_proverqa_record(rec, split, pid=f"pqa-{split}-{i:04d}"))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:  # any malformed record
            failures.append((i, str(exc) if not isinstance(exc, RecursionError) else "nested too deeply"))
    failures = unreadable + failures
    if failures and not problems:
        raise ValueError(f"no ProverQA record could be formalised; record {failures[0][0]}: {failures[0][1]}")
    if skipped is not None:
        skipped.extend(failures)
    return problems
