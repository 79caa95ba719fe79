"""Training: `prosfi train` (recipe -> SFT warm-up -> GRPO -> summary), `prosfi sft`, `prosfi model tiny`.

config   script arguments (mirroring reward/chain/verifier/Lean/tiny-model configs as prefixed keys)
recipe   YAML + overrides -> (script, GRPOConfig, ModelConfig); run names, resume, dry runs
problems / rows   problems for a run and the TRL rows built from them
tiny     the tiny local Qwen2 model and task-trained tokenizer
sft / grpo / summary   the stages and the end-of-run report
"""
