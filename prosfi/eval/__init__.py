"""`prosfi eval`: answer accuracy and verified-chain rate ("reward hit") by source and difficulty, for
a checkpoint, a served model or a completions file; reports, plots, comparisons, a training callback.

Layers, each usable alone:
- `sources`: `--data SPEC` -> problems tagged (source, difficulty)
- `generate`: problems -> completions (transformers, vLLM, OpenAI-compatible endpoint, file)
- `scoring`: completions -> scored records (through `prosfi.rewards.score`)
- `metrics`: records -> summary metrics with bootstrap intervals, pass@k, maj@k
- `evaluate`: all of the above plus the output folder
"""

from prosfi.eval.endpoint import EndpointConfig, EndpointError, generate_endpoint
from prosfi.eval.evaluate import EvalResult, evaluate, evaluate_checkpoint, read_records, read_summary
from prosfi.eval.generate import (
                                  Generation,
                                  GenerationConfig,
                                  PromptSettings,
                                  build_prompts,
                                  generate_hf,
                                  generate_vllm,
                                  load_hf,
                                  read_completions,
)
from prosfi.eval.metrics import metrics, summarize
from prosfi.eval.scoring import score_generations
from prosfi.eval.sources import Source, SpecError, group_of, load_source, load_sources

__all__ = ["EndpointConfig", "EndpointError", "EvalResult", "Generation", "GenerationConfig", "PromptSettings",
           "Source", "SpecError", "build_prompts", "evaluate", "evaluate_checkpoint", "generate_endpoint",
           "generate_hf", "generate_vllm", "group_of", "load_hf", "load_source", "load_sources", "metrics", "read_completions", "read_records",
           "read_summary", "score_generations", "summarize"]
