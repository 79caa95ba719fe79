"""Completions for evaluation: from a transformers model, vLLM's offline engine, an OpenAI-compatible
endpoint (`prosfi.eval.endpoint`), or a file.

Every path takes problems and returns `Generation`s (problem id, sample index, text, token count),
`n` per problem, in problem order. Prompts are the training prompts (`build_prompts`, the same
messages `prosfi train` puts in its rows), so a model is evaluated on what it was trained on; a
recipe's `system_prompt`, `few_shot` and `reward_mode` carry over through `prosfi.eval.cli.prompt_settings`.
Heavy imports (torch, transformers, vllm, httpx) happen inside the function that needs them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem

log = logging.getLogger(__name__)


@dataclass
class GenerationConfig:
    n: int = field(default=1, metadata={"help": "samples per problem (pass@k / maj@k with n > 1)"})
    temperature: float | None = field(
        default=None, metadata={"help": "sampling temperature (default: 0 = greedy for n=1, 1.0 for n>1)"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling"})
    max_new_tokens: int = field(default=1024, metadata={"help": "completion length limit in tokens"})
    seed: int = field(default=0, metadata={"help": "sampling seed"})
    batch_size: int = field(default=8, metadata={"help": "prompts per transformers generate() call"})

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"GenerationConfig.n must be >= 1, got {self.n}")
        if self.max_new_tokens < 1:
            raise ValueError(f"GenerationConfig.max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature is not None and self.temperature < 0:
            raise ValueError(f"GenerationConfig.temperature must be >= 0, got {self.temperature}")
        if self.n > 1 and self.temperature == 0:
            raise ValueError("GenerationConfig: n > 1 samples need temperature > 0 (greedy samples are all the same)")

    @property
    def effective_temperature(self) -> float:
        return (0.0 if self.n == 1 else 1.0) if self.temperature is None else float(self.temperature)


@dataclass
class Generation:
    problem_id: str
    sample: int
    completion: str
    tokens: int | None = None  # completion tokens when the generator knows them

    def to_json(self) -> dict[str, Any]:
        return {"problem_id": self.problem_id, "sample": self.sample, "completion": self.completion,
                "tokens": self.tokens}


@dataclass
class PromptSettings:
    """How prompts are built: the recipe keys `system_prompt`, `few_shot`, `reward_mode`, and its chain rules
    (`chain`, a `ChainConfig`: a domain's default system prompt states them)."""

    system_prompt: str | None = None
    few_shot: int = 0
    reward_mode: str = "prosfi"
    chain: Any = None


def build_prompts(problems: Sequence[Problem], settings: PromptSettings | None = None) -> list[list[dict]]:
    """The chat messages `prosfi train` would show for each problem (system prompt, shots, problem), in the
    completion format the reward mode selects (`prosfi.rewards.formats`); a format without worked examples
    gets none."""
    from prosfi.rewards.formats import format_for

    s = settings or PromptSettings()
    fmt = format_for(s.reward_mode)
    rows = fmt.prompt_rows(problems, s.system_prompt, s.few_shot if fmt.few_shot else 0, s.chain)
    return [r["prompt"] for r in rows]


def progress_bar(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, unit="completion", dynamic_ncols=True)


# --- transformers -----------------------------------------------------------------------------------------

def load_hf(model_path: str, device: str | None = None, dtype: str = "auto"):
    """(model, tokenizer) for generation: eval mode, left padding, a pad token."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    kwargs: dict[str, Any] = {}
    if dtype != "auto":
        kwargs["dtype"] = getattr(torch, dtype)
    model = AutoModelForCausalLM.from_pretrained(model_path, **kwargs)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval()
    return model, tokenizer


def generate_hf(problems: Sequence[Problem], model, tokenizer=None, config: GenerationConfig | None = None,
                settings: PromptSettings | None = None, progress: bool = True) -> list[Generation]:
    """Batched `model.generate` with the chat template and left padding. `model` is a loaded causal LM
    (then `tokenizer` is required) or a path / hub id (loaded with `load_hf`)."""
    import torch

    cfg = config or GenerationConfig()
    if isinstance(model, (str, Path)):
        model, tokenizer = load_hf(str(model))
    if tokenizer is None:
        raise ValueError("generate_hf: pass the tokenizer with a loaded model")
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    prompts = [tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
               for m in build_prompts(problems, settings)]
    temperature = cfg.effective_temperature
    sample = temperature > 0
    gen_kwargs: dict[str, Any] = {"max_new_tokens": cfg.max_new_tokens, "do_sample": sample,
                                  "num_return_sequences": cfg.n, "pad_token_id": tokenizer.pad_token_id}
    if sample:
        gen_kwargs.update(temperature=temperature, top_p=cfg.top_p)
    else:
        gen_kwargs.update(temperature=None, top_p=None, top_k=None)
    from transformers import set_seed

    set_seed(cfg.seed)
    device = next(model.parameters()).device
    eos = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
    was_training = model.training
    model.eval()
    # batches of similar prompt lengths waste less on padding; results go back in problem order
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    slots: list[list[Generation]] = [[] for _ in problems]
    bar = progress_bar(len(problems) * cfg.n, "generating", progress)
    try:
        for start in range(0, len(order), cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            enc = tokenizer([prompts[i] for i in idx], return_tensors="pt", padding=True,
                            add_special_tokens=False).to(device)
            with torch.no_grad():
                seqs = model.generate(**enc, **gen_kwargs)
            new = seqs[:, enc["input_ids"].shape[1]:].tolist()
            for j, ids in enumerate(new):
                i = idx[j // cfg.n]
                n_tokens = next((k for k, t in enumerate(ids) if t in eos), len(ids))
                text = tokenizer.decode(ids[:n_tokens], skip_special_tokens=True)
                slots[i].append(Generation(problems[i].id, j % cfg.n, text, n_tokens))
            bar.update(len(new))
    finally:
        bar.close()
        if was_training:
            model.train()
    return [g for slot in slots for g in slot]


# --- vLLM ---------------------------------------------------------------------------------------------------

def generate_vllm(problems: Sequence[Problem], model_path: str, config: GenerationConfig | None = None,
                  settings: PromptSettings | None = None, progress: bool = True,
                  engine_kwargs: dict[str, Any] | None = None) -> list[Generation]:
    """vLLM's offline engine (`LLM.chat`), for GPU nodes; `pip install -e '.[vllm]'` (without it, `prosfi`
    says which extra to install: `prosfi.usage.missing_extra`)."""
    from vllm import LLM, SamplingParams

    cfg = config or GenerationConfig()
    llm = LLM(model=model_path, seed=cfg.seed, **(engine_kwargs or {}))
    params = SamplingParams(n=cfg.n, temperature=cfg.effective_temperature, top_p=cfg.top_p,
                            max_tokens=cfg.max_new_tokens, seed=cfg.seed)
    results = llm.chat(build_prompts(problems, settings), params, use_tqdm=progress)
    out: list[Generation] = []
    for problem, res in zip(problems, results):
        for k, o in enumerate(res.outputs):
            out.append(Generation(problem.id, k, o.text, len(o.token_ids)))
    return out


# --- a completions file -------------------------------------------------------------------------------------

def read_completions(path: str | Path, skipped: list | None = None) -> list[Generation]:
    """`{"problem_id", "completion"[, "sample"][, "tokens"]}` lines (a conversational completion is
    accepted). Samples are numbered per problem in file order unless given. Lines end at `\\n` only and
    no line can stop the reading (`prosfi.jsonl`): unreadable lines go to `skipped` as (line number,
    reason); blank lines are ignored."""
    from prosfi import jsonl
    from prosfi.trace.extract import completion_text

    out: list[Generation] = []
    counts: dict[str, int] = {}
    rows, bad = jsonl.read_objects(str(path))
    for lineno, rec in rows:
        pid, text = rec.get("problem_id"), rec.get("completion")
        if isinstance(pid, bool) or not isinstance(pid, (str, int)):
            bad.append((lineno, "no 'problem_id' (a string)"))
            continue
        if not isinstance(text, str):
            try:
                text = completion_text(text)
            except (TypeError, KeyError, IndexError, AttributeError):
                text = None
            if not isinstance(text, str):
                bad.append((lineno, "no 'completion' text"))
                continue
        pid = str(pid)
        sample = rec.get("sample")
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            sample = counts.get(pid, 0)
        counts[pid] = max(counts.get(pid, 0), sample + 1)
        tokens = rec.get("tokens")
        out.append(Generation(pid, sample, text, tokens if isinstance(tokens, int) and not isinstance(tokens, bool)
                              else None))
    if skipped is not None:
        skipped.extend(sorted(bad))
    return out


Generator = Callable[[Sequence[Problem]], list[Generation]]


__all__ = ["Generation", "GenerationConfig", "Generator", "PromptSettings", "build_prompts", "generate_hf",
           "generate_vllm", "load_hf", "read_completions"]
