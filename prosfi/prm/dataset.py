"""Shape labelled chains into a PRM dataset: dedupe, balance, split by problem, expand to trainer rows.

Invariants (tested): a problem's chains all land in one split; balancing only removes chains or
cuts a chain right after an incorrect step, so every kept label is the verifier's; a training
example (problem, steps so far, step) appears once per split.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from typing import Any


def counts(records: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """(correct, incorrect) labelled steps."""
    correct = incorrect = 0
    for r in records:
        c = sum(bool(x) for x in r["labels"])
        correct += c
        incorrect += len(r["labels"]) - c
    return correct, incorrect


def correct_fraction(records: Sequence[dict[str, Any]]) -> float:
    c, i = counts(records)
    return c / (c + i) if c + i else 0.0


def dedupe_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop chains identical to an earlier chain of the same problem (same steps, same order)."""
    seen: set[tuple] = set()
    out = []
    for r in records:
        key = (r["problem_id"], tuple(r["completions"]))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def truncate_after_first_error(record: dict[str, Any]) -> dict[str, Any]:
    """The chain up to and including its first incorrect step (the record itself when it has none)."""
    k = record.get("first_error")
    if k is None or k + 1 >= len(record["labels"]):
        return record
    out = dict(record)
    for key in ("completions", "labels", "steps", "verdicts", "positions"):
        if key in out:
            out[key] = list(record[key][: k + 1])
    out["truncated"] = True
    return out


def balance(records: Sequence[dict[str, Any]], target: float = 0.5, truncate: bool = True, seed: int = 0,
            ) -> list[dict[str, Any]]:
    """Bring the fraction of correct steps towards `target` (FoVer: 0.5).

    First (with `truncate`), while correct steps are in excess, cut chains right after their first
    error (one at a time, in a seeded order, only when that brings the fraction closer). Then drop
    whole chains of the side in excess, most one-sided first (seeded order within ties), as long as
    the fraction stays on that side; finally drop the one chain that brings it closest, if any does.
    """
    if not 0.0 < target < 1.0:
        raise ValueError(f"balance target must be between 0 and 1, got {target}")
    recs = list(records)
    rng = random.Random(seed)
    order = list(range(len(recs)))
    rng.shuffle(order)
    c, i = counts(recs)
    if truncate:  # one chain at a time, only while it brings the fraction closer to the target
        for j in order:
            if c + i == 0 or c / (c + i) <= target:
                break
            cut = truncate_after_first_error(recs[j])
            if cut is recs[j]:
                continue
            (oc, oi), (nc, ni) = counts([recs[j]]), counts([cut])
            if abs((c - oc + nc) / (c - oc + nc + i - oi + ni) - target) < abs(c / (c + i) - target):
                recs[j] = cut
                c, i = c - oc + nc, i - oi + ni
    excess_correct = c / max(1, c + i) > target

    def share(r: dict[str, Any]) -> float:
        k = sum(bool(x) for x in r["labels"]) / len(r["labels"])
        return k if excess_correct else 1.0 - k

    order.sort(key=lambda j: -share(recs[j]))  # stable: seeded order within equal shares
    dropped: set[int] = set()

    def after(j: int) -> tuple[int, int]:
        rc, ri = counts([recs[j]])
        return c - rc, i - ri

    def side(cc: int, ii: int) -> bool:
        return cc / (cc + ii) > target

    # drop chains of the side in excess while that does not cross the target ...
    for j in order:
        if c + i == 0 or abs(c / (c + i) - target) < 1e-12 or side(c, i) != excess_correct:
            break
        nc, ni = after(j)
        if share(recs[j]) <= 0.5 or nc + ni == 0:
            continue
        closer = abs(nc / (nc + ni) - target) < abs(c / (c + i) - target) - 1e-12
        if closer and (side(nc, ni) == excess_correct or abs(nc / (nc + ni) - target) < 1e-12):
            dropped.add(j)
            c, i = nc, ni
    # ... then the one chain whose removal brings the fraction closest, if any does
    if c + i and abs(c / (c + i) - target) > 1e-12:
        best, best_gap = None, abs(c / (c + i) - target)
        for j in order:
            nc, ni = after(j)
            if j in dropped or nc + ni == 0:
                continue
            gap = abs(nc / (nc + ni) - target)
            if gap < best_gap - 1e-12:
                best, best_gap = j, gap
        if best is not None:
            dropped.add(best)
    return [r for j, r in enumerate(recs) if j not in dropped]


def _bucket(problem_id: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}:{problem_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_by_problem(records: Sequence[dict[str, Any]], val_fraction: float = 0.1, seed: int = 0,
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, validation): every problem's chains go to one side, decided by a seeded hash of its id.

    At least one problem goes to validation when there are two or more problems and val_fraction > 0.
    """
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    ids = sorted({r["problem_id"] for r in records}, key=lambda p: _bucket(p, seed))
    n_val = round(len(ids) * val_fraction)
    if val_fraction > 0 and n_val == 0 and len(ids) >= 2:
        n_val = 1
    val_ids = set(ids[:n_val])
    return ([r for r in records if r["problem_id"] not in val_ids],
            [r for r in records if r["problem_id"] in val_ids])


def step_examples(records: Iterable[dict[str, Any]], dedupe: bool = True) -> Iterable[tuple[dict, int]]:
    """(record, step index) for every labelled step; with `dedupe`, identical (problem, steps so far,
    step) examples are yielded once."""
    seen: set[tuple] = set()
    for r in records:
        for k in range(len(r["labels"])):
            if dedupe:
                key = (r["problem_id"], tuple(r["completions"][: k + 1]))
                if key in seen:
                    continue
                seen.add(key)
            yield r, k


def sft_rows(records: Iterable[dict[str, Any]], dedupe: bool = True) -> list[dict[str, Any]]:
    """Conversational prompt/completion rows for TRL's SFTTrainer (loss on the label word only)."""
    from prosfi.prm.inputs import judge_messages, label_message

    return [{"prompt": judge_messages(r["prompt"], r["steps"][:k], r["steps"][k]),
             "completion": label_message(bool(r["labels"][k]))} for r, k in step_examples(records, dedupe)]


def read_records(path: str | Any, what: str = "", needs: dict[str, type | tuple] | None = None
                 ) -> list[dict[str, Any]]:
    """The records of a JSONL input (`prosfi.jsonl`: no line stops the reading) that carry the fields in
    `needs` with the right types; other lines are reported on stderr (count and first reason). A file
    with no usable record is a ValueError that says why."""
    import sys
    from pathlib import Path

    from prosfi import jsonl

    path = str(path)
    if not Path(path).is_file():
        raise ValueError(f"{what}: no such file {path!r}")
    rows, skipped = jsonl.read_objects(path)
    good = []
    for lineno, rec in rows:
        bad = [k for k, t in (needs or {}).items() if not isinstance(rec.get(k), t) or isinstance(rec.get(k), bool)]
        if bad:
            skipped.append((lineno, f"no {', '.join(repr(k) for k in bad)} of the right type"))
        else:
            good.append(rec)
    skipped.sort()
    if not good:
        raise ValueError(f"{what} {path}: ".lstrip() + ("the file is empty" if not skipped else
                         "no usable record; " + jsonl.skipped_note(path, skipped)))
    if skipped:
        print(f"warning: {what} {jsonl.skipped_note(path, skipped)}".replace("  ", " "), file=sys.stderr)
    return good


LABELLED_FIELDS: dict[str, Any] = {"prompt": str, "steps": list, "labels": list}  # what scoring a chain needs
SFT_FIELDS: dict[str, Any] = {**LABELLED_FIELDS, "problem_id": (str, int), "completions": list}  # and training


def labelled_records(path: str | Any, what: str = "", needs: dict[str, Any] = LABELLED_FIELDS) -> list[dict[str, Any]]:
    """`prosfi prm label` records carrying `needs` whose steps and labels (and completions, when `needs` names
    them) line up, every step an object; the others are reported on stderr and left out (`read_records`)."""
    import sys

    records = read_records(path, what, needs)
    where = f"{what} {path}".strip()
    aligned = [k for k in ("steps", "labels", "completions") if k in needs]
    good = [r for r in records if len({len(r[k]) for k in aligned}) == 1 and all(isinstance(x, dict) for x in r["steps"])]
    if len(good) < len(records):
        print(f"warning: {where}: {len(records) - len(good)} record(s) left out ({', '.join(aligned)} differ in number, "
              "or a step is not an object)", file=sys.stderr)
    if not good:
        raise ValueError(f"{where}: no labelled record whose steps and labels line up")
    return good


def stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    c, i = counts(records)
    return {"chains": len(records), "problems": len({r["problem_id"] for r in records}), "correct_steps": c,
            "incorrect_steps": i, "correct_fraction": round(c / (c + i), 4) if c + i else None,
            "chains_with_error": sum(r.get("first_error") is not None for r in records)}


__all__ = ["LABELLED_FIELDS", "SFT_FIELDS", "balance", "correct_fraction", "counts", "dedupe_records", "labelled_records",
           "read_records", "sft_rows", "split_by_problem", "stats",
           "step_examples", "truncate_after_first_error"]
