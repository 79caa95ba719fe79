"""verl: `compute_score(data_source, solution_str, ground_truth, extra_info=None)` -> `{"score", ...}`.

`ground_truth` (the dataset's `reward_model.ground_truth`) is the problem: `json.dumps(problem.to_dict())`,
the dict itself, or — with a service started with `--data` — its id. `data_source` is not looked at: one
function serves every prosfi problem kind. The dict has `score` (the prosfi reward) and the components
`format_ok`, `answer_correct`, `chain_valid`, `verified_fraction`, `masked` (floats, the same keys for every
sample, so verl can log them). In-process by default; through `prosfi serve` when $PROSFI_SERVE_URL (and
$PROSFI_SERVE_TOKEN) are set. A sample the service could not score has `masked: 1.0` and score 0.0.
`compute_score_batch` is the same for verl's batch reward manager (one request per batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.integrations.local import score_problems
from prosfi.serve.contracts import parse_problem, verl_result


def _problem(ground_truth: Any, extra_info: Any):
    if isinstance(extra_info, dict) and extra_info.get("problem") is not None and not ground_truth:
        ground_truth = extra_info["problem"]
    if isinstance(ground_truth, str) and not ground_truth.lstrip().startswith("{"):
        return ground_truth  # a preloaded problem's id
    return parse_problem(ground_truth, {})


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    record = score_problems([_problem(ground_truth, extra_info)], [solution_str])[0]
    return verl_result(record, record.get("failure_kind") if record.get("masked") else None)


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    extra_infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    problems = [_problem(g, e) for g, e in zip(ground_truths, extra_infos)]
    records = score_problems(problems, list(solution_strs))
    return [verl_result(r, r.get("failure_kind") if r.get("masked") else None) for r in records]


__all__ = ["compute_score", "compute_score_batch"]
