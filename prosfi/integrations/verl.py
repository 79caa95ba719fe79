"""verl: `custom_reward_function.path` is this file; `name` is one of the entries below (which one for which
reward manager: `prosfi.integrations._verl`, and the table in docs/serving.md).

This file only re-exports. verl loads it by path as a module named `custom_module`; functions defined here
would pickle as `custom_module.compute_score`, which verl's `prime` process pool (under spawn or forkserver)
and Ray workers cannot import. Re-exported, they pickle as `prosfi.integrations._verl.compute_score`.
"""

from prosfi.integrations._verl import compute_score, compute_score_batch, compute_score_float

__all__ = ["compute_score", "compute_score_batch", "compute_score_float"]
