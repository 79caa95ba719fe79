"""Thin adapters from other RL frameworks' reward contracts to prosfi's reward (docs/serving.md).

- `prosfi.integrations.verl`: `compute_score` (naive/dapo reward managers), `compute_score_batch` (the batch
  manager), `compute_score_float` (the prime manager, `main_eval`); in-process by default, through
  `prosfi serve` when $PROSFI_SERVE_URL is set.
- `prosfi.integrations.openrlhf`: `reward_func(queries, prompts, labels)` for `--reward.remote_url FILE.py`.
- `prosfi.integrations.verifiers`: a PrimeIntellect `verifiers` environment (needs `pip install verifiers`).
"""
