"""OpenRLHF: `reward_func(queries, prompts, labels)` for `--reward.remote_url path/to/this_file.py`
(older releases: `--remote_rm_url`), the same answer as `prosfi serve`'s POST /openrlhf.

`queries` are prompt + response, decoded with special tokens kept (the response is what follows the prompt,
without the end-of-turn / end-of-text tokens decoded at its end); `labels` (`--data.label_key`)
are problems (JSON strings or objects) or, through a service started with `--data`, problem ids. Returns
`{"rewards", "scores", "extra_logs"}` with `rewards` as a torch tensor when torch is importable (what
OpenRLHF's local path expects); masked samples: reward 0.0 and `extra_logs["prosfi/masked"] = 1.0`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.integrations._verl import problem_of
from prosfi.integrations.local import score_problems
from prosfi.serve.contracts import Outcome, completion_from_query, openrlhf_response


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> dict:
    prompts = list(prompts) if prompts is not None else [None] * len(queries)
    texts = [completion_from_query(q, p) for q, p in zip(queries, prompts)]
    records = score_problems([problem_of(label, None) for label in labels], texts)
    outcomes = [Outcome(r, r.get("failure_kind") if r.get("masked") else None, r.get("failure_reason", ""))
                for r in records]
    out = openrlhf_response(outcomes)
    try:
        import torch

        out["rewards"] = torch.tensor(out["rewards"], dtype=torch.float)
        out["scores"] = torch.tensor(out["scores"], dtype=torch.float)
        out["extra_logs"] = {k: torch.tensor(v, dtype=torch.float) for k, v in out["extra_logs"].items()}
    except ImportError:  # pragma: no cover - OpenRLHF always has torch
        pass
    out.pop("failures", None)
    return out


__all__ = ["reward_func"]
