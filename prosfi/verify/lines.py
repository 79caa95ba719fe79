"""`prosfi check`'s line format, read and answered: one output record per input line, in order. The service's
/check endpoint answers the same lines the same way (`prosfi.serve.engine`), so the reader lives here, in the
verify layer, not in the command module.

Input line:  {"id": …, "premises": {"h1": "<formula>", …}, "conclusion": "<formula>"}
         or  {"id": …, "quantities": {"d": "120 km", "t": "1.5 h"}, "expr": "d / t", "claim": "80 km/h"}
Output line: {"id": …, "verdict": "valid|invalid|unknown|error", "backend": …, "ms": …, "detail": …}
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from prosfi import jsonl
from prosfi.quant import Tolerance
from prosfi.verdict import Entailment, Verdict, error
from prosfi.verify import quantity

_ID_RE = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d{1,100})(?=\s*[,}])')


def _error_line(detail: str, raw: str | None = None, obj: Any = None) -> tuple[Any, Verdict]:
    ident = obj.get("id") if isinstance(obj, dict) else None
    if ident is None and raw is not None:
        m = _ID_RE.search(raw)
        if m:
            try:
                ident = json.loads(m.group(1))
            except ValueError:
                ident = None
    return ident, error(detail)


def read_line(line: str, tol: Any = None) -> tuple[Any, Any]:
    """(id, Entailment | QuantityCheck) for a well-formed line, else (id if readable, an `error` Verdict)."""
    text = line.strip()
    if not text:
        return None, error("empty line")
    obj, why = jsonl.loads(text)
    if why is not None:
        return _error_line(f"not valid JSON: {why}", raw=text)
    if not isinstance(obj, dict):
        return None, error(f"a step check must be a JSON object, not {type(obj).__name__}")
    if quantity.is_quantity_line(obj):
        read = quantity.read_quantity(obj, tol if tol is not None else Tolerance())
        return (obj.get("id"), read) if not isinstance(read, Verdict) else _error_line(read.detail, obj=obj)
    missing = [k for k in ("premises", "conclusion") if k not in obj]
    if missing:
        return _error_line(f"missing field(s): {', '.join(missing)}", obj=obj)
    premises, conclusion = obj["premises"], obj["conclusion"]
    if not isinstance(premises, dict):
        return _error_line("`premises` must be an object mapping names to formulas", obj=obj)
    bad = [str(k) for k, v in premises.items() if not isinstance(v, str)]
    if bad:
        return _error_line(f"premise(s) {', '.join(bad)}: a formula must be a string", obj=obj)
    if not isinstance(conclusion, str):
        return _error_line("`conclusion` must be a string", obj=obj)
    ident = obj.get("id")
    return ident, Entailment(premises, conclusion, None if ident is None else str(ident))


def output_record(ident: Any, verdict: Verdict) -> dict:
    return {"id": ident, "verdict": verdict.status.value, "backend": verdict.backend,
            "ms": round(verdict.ms, 3), "detail": verdict.detail}


def check_lines(lines: Iterable[str], verifier, chunk_size: int = 4096, tol: Any = None) -> Iterator[dict]:
    """One output record per input line, in order, verifying `chunk_size` lines at a time. Logic
    lines go to `verifier`, quantity lines are answered in this process (prosfi.verify.quantity)."""
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, chunk_size))
        if not chunk:
            return
        read = [read_line(line, tol) for line in chunk]
        todo = [(k, x) for k, (_, x) in enumerate(read) if isinstance(x, Entailment)]
        verdicts = verifier.check_many([x for _, x in todo]) if todo else []
        answers: dict[int, Verdict] = {k: v for (k, _), v in zip(todo, verdicts)}
        qtodo = [(k, x) for k, (_, x) in enumerate(read) if isinstance(x, quantity.QuantityCheck)]
        if qtodo:
            answers.update((k, v) for (k, _), v in zip(qtodo, quantity.check_many([x for _, x in qtodo])))
        for k, (ident, x) in enumerate(read):
            yield output_record(ident, answers.get(k, x))  # type: ignore[arg-type]


__all__ = ["check_lines", "output_record", "read_line"]
