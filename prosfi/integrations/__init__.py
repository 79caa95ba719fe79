"""Thin adapters from other RL frameworks' reward contracts to prosfi's reward (docs/serving.md).

- `prosfi.integrations.verl`: `compute_score` (naive/prime reward managers) and `compute_score_batch`
  (the batch manager); in-process by default, through `prosfi serve` when $PROSFI_SERVE_URL is set.
- `prosfi.integrations.openrlhf`: `reward_func(queries, prompts, labels)` for `--reward.remote_url FILE.py`.
- `prosfi.integrations.verifiers`: a PrimeIntellect `verifiers` environment (needs `pip install verifiers`).
"""
