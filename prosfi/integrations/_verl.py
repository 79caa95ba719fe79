"""verl's reward entries (import them from `prosfi.integrations.verl`; docs/serving.md has the table).

Which entry for which caller, as verl's own source calls it (verl b178a3c):

- `compute_score(data_source, solution_str, ground_truth, extra_info=None)` -> `{"score", components...}`:
  the `naive` and `dapo` reward managers (keyword call, one sample; the extra keys go to
  `reward_extra_info`) and the experimental reward loop.
- `compute_score_batch(data_sources=, solution_strs=, ground_truths=, extra_infos=)` -> list of those dicts:
  the `batch` reward manager (one call, one service request, per batch).
- `compute_score_float(data_source, solution_str, ground_truth, extra_info=None)` -> float: the `prime`
  reward manager (positional call in a process pool; it reads a number or `result[0]`, so a dict would be
  `KeyError(0)` and zero the batch) and `verl.trainer.main_eval` (`np.mean` of the results).

`ground_truth` (the dataset's `reward_model.ground_truth`) is the problem: `json.dumps(problem.to_dict())`,
the dict itself (as parquet gives it back: numpy arrays, other rows' keys as None), or — with a service started with `--data` — its id. `data_source` is not looked at. The dict
has `score` and `format_ok`, `answer_correct`, `chain_valid`, `verified_fraction`, `masked` (floats, the same
keys for every sample). In-process by default (a verifier per process, rebuilt in a forked child); through
`prosfi serve` when $PROSFI_SERVE_URL (and $PROSFI_SERVE_TOKEN) are set. A sample the service could not score
has `masked: 1.0` and score 0.0.

The functions live here, not in `verl.py`, so that they pickle by this importable name: verl loads
`custom_reward_function.path` as a module named `custom_module`, which a process-pool or Ray worker
cannot import; `verl.py` only re-exports these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.integrations.local import score_problems
from prosfi.serve.contracts import parse_problem, verl_result


def plain(value: Any) -> Any:
    """A value read back from parquet as its JSON was: numpy arrays (pandas) and numpy scalars become lists
    and Python scalars, and a struct's keys that only other rows have (filled with None by Arrow, which
    gives every row of a column the union of their keys: one problem's `assignment` gets the others' atoms)
    are dropped."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return plain(value.tolist())
    return value


def problem_of(ground_truth: Any, extra_info: Any):
    if isinstance(extra_info, dict) and extra_info.get("problem") is not None and not ground_truth:
        ground_truth = extra_info["problem"]
    if isinstance(ground_truth, str) and not ground_truth.lstrip().startswith("{"):
        return ground_truth  # a preloaded problem's id
    if not isinstance(ground_truth, str):
        ground_truth = plain(ground_truth)
    return parse_problem(ground_truth, {})


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    record = score_problems([problem_of(ground_truth, extra_info)], [solution_str])[0]
    return verl_result(record, record.get("failure_kind") if record.get("masked") else None)


def compute_score_batch(data_sources: Sequence[Any] | None = None, solution_strs: Sequence[str] | None = None,
                        ground_truths: Sequence[Any] | None = None, extra_infos: Sequence[Any] | None = None,
                        **kwargs: Any) -> list[dict[str, Any]]:
    if solution_strs is None or ground_truths is None:
        # verl 0.9's reward loop calls compute_score(data_source=, solution_str=, ...) one sample at a time
        raise TypeError("compute_score_batch is the entry for an older verl's `batch` reward manager; verl 0.9's "
                        "reward loop calls one sample at a time: set reward.custom_reward_function.name=compute_score")
    extra_infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    problems = [problem_of(g, e) for g, e in zip(ground_truths, extra_infos)]
    records = score_problems(problems, list(solution_strs))
    return [verl_result(r, r.get("failure_kind") if r.get("masked") else None) for r in records]


def compute_score_float(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                        **kwargs: Any) -> float:
    """`compute_score(...)["score"]`: the number verl's `prime` manager and `main_eval` need."""
    return float(compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)["score"])


__all__ = ["compute_score", "compute_score_batch", "compute_score_float"]
