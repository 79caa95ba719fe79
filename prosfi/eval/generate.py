"""Completions for evaluation: from a transformers model, vLLM's offline engine, an OpenAI-compatible
endpoint, or a file.

Every path takes problems and returns `Generation`s (problem id, sample index, text, token count),
`n` per problem, in problem order. Prompts are the training prompts (`build_prompts`, the same
messages `prosfi train` puts in its rows), so a model is evaluated on what it was trained on; a
recipe's `system_prompt`, `few_shot` and `reward_mode` carry over through `PromptSettings.from_recipe`.
Heavy imports (torch, transformers, vllm, httpx) happen inside the function that needs them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import threading
import time
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
    """How prompts are built: the recipe keys `system_prompt`, `few_shot`, `reward_mode`."""

    system_prompt: str | None = None
    few_shot: int = 0
    reward_mode: str = "prosfi"

    @classmethod
    def from_recipe(cls, path: str | None) -> PromptSettings:
        if not path:
            return cls()
        from prosfi.train.recipe import resolve

        script = resolve(path, [], dry_run=True).script
        return cls(script.system_prompt, script.few_shot, script.reward_mode)


def build_prompts(problems: Sequence[Problem], settings: PromptSettings | None = None) -> list[list[dict]]:
    """The chat messages `prosfi train` would show for each problem (system prompt, shots, problem)."""
    from prosfi.data.prompts import SYSTEM_PROMPT, prompt_rows

    s = settings or PromptSettings()
    if s.reward_mode == "direct_lean":
        from prosfi.rewards.direct_lean import DIRECT_LEAN_SYSTEM_PROMPT, direct_lean_prompt

        rows = prompt_rows(problems, s.system_prompt or DIRECT_LEAN_SYSTEM_PROMPT, 0, user_suffix=direct_lean_prompt)
    else:
        rows = prompt_rows(problems, s.system_prompt or SYSTEM_PROMPT, s.few_shot)
    return [r["prompt"] for r in rows]


def _progress(total: int, desc: str, enabled: bool):
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
    out: list[Generation] = []
    bar = _progress(len(problems) * cfg.n, "generating", progress)
    try:
        for start in range(0, len(prompts), cfg.batch_size):
            batch = prompts[start:start + cfg.batch_size]
            enc = tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            with torch.no_grad():
                seqs = model.generate(**enc, **gen_kwargs)
            new = seqs[:, enc["input_ids"].shape[1]:].tolist()
            for j, ids in enumerate(new):
                problem = problems[start + j // cfg.n]
                n_tokens = next((k for k, t in enumerate(ids) if t in eos), len(ids))
                text = tokenizer.decode(ids[:n_tokens], skip_special_tokens=True)
                out.append(Generation(problem.id, j % cfg.n, text, n_tokens))
            bar.update(len(new))
    finally:
        bar.close()
        if was_training:
            model.train()
    return out


# --- vLLM ---------------------------------------------------------------------------------------------------

def generate_vllm(problems: Sequence[Problem], model_path: str, config: GenerationConfig | None = None,
                  settings: PromptSettings | None = None, progress: bool = True,
                  engine_kwargs: dict[str, Any] | None = None) -> list[Generation]:
    """vLLM's offline engine (`LLM.chat`), for GPU nodes; `pip install prosfi[vllm]`."""
    try:
        from vllm import LLM, SamplingParams
    except ImportError as exc:
        raise RuntimeError("--engine vllm needs vLLM: pip install 'prosfi[vllm]' (GPU nodes)") from exc
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


# --- OpenAI-compatible endpoint -----------------------------------------------------------------------------

class EndpointError(RuntimeError):
    """Requests that still failed after their retries; the finished ones are in the cache."""


def chat_url(url: str) -> str:
    """`http://host:8000` / `.../v1` / `.../v1/chat/completions` -> the chat completions URL."""
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if not url.endswith("/v1") and "/v1/" not in url + "/":
        url += "/v1"
    return url + "/chat/completions"


class RequestCache:
    """Finished requests, one JSON line each, appended as they finish: a rerun skips them.

    The key hashes everything that determines a request (model, messages, sampling settings, sample
    seed), so changing a setting re-requests rather than reusing stale text. A torn last line (a kill
    mid-write) is ignored."""

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self.done: dict[str, dict] = {}
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and "key" in rec:
                    self.done[rec["key"]] = rec

    @staticmethod
    def key(payload: dict) -> str:
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]

    def add(self, rec: dict) -> None:
        with self._lock:
            self.done[rec["key"]] = rec
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


@dataclass
class EndpointConfig:
    url: str = field(metadata={"help": "OpenAI-compatible base URL, e.g. http://localhost:8000/v1"})
    served_model: str = field(metadata={"help": "the model name the server serves"})
    concurrency: int = field(default=8, metadata={"help": "requests in flight at once"})
    retries: int = field(default=5, metadata={"help": "retries per request (connection errors, 429, 5xx)"})
    backoff_s: float = field(default=1.0, metadata={"help": "first retry delay; doubles each retry (max 60 s)"})
    timeout_s: float = field(default=600.0, metadata={"help": "per-request timeout"})
    api_key: str | None = field(default=None, metadata={"help": "bearer token (default: $OPENAI_API_KEY)"})


def _post_with_retries(client, url: str, payload: dict, cfg: EndpointConfig, headers: dict) -> dict:
    import httpx

    delay = cfg.backoff_s
    last = ""
    for attempt in range(cfg.retries + 1):
        try:
            resp = client.post(url, json=payload, headers=headers, timeout=cfg.timeout_s)
            if resp.status_code == 200:
                return resp.json()
            last = f"HTTP {resp.status_code}: {resp.text[:200]}"
            if resp.status_code not in (408, 409, 429) and resp.status_code < 500:
                break  # a request the server will never accept: do not retry
        except (httpx.HTTPError, ValueError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if attempt < cfg.retries:
            time.sleep(min(60.0, delay) * (0.5 + random.random()))
            delay *= 2
    raise EndpointError(last)


def chat_completion(client, cfg: EndpointConfig, messages: list[dict], *, temperature: float, top_p: float,
                    max_tokens: int, seed: int | None = None) -> tuple[str, int | None]:
    """One chat request with retries -> (assistant text, completion tokens or None)."""
    import os

    payload = {"model": cfg.served_model, "messages": messages, "temperature": temperature, "top_p": top_p,
               "max_tokens": max_tokens, "n": 1}
    if seed is not None:
        payload["seed"] = seed
    key = cfg.api_key or os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = _post_with_retries(client, chat_url(cfg.url), payload, cfg, headers)
    try:
        text = data["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"unexpected response: {str(data)[:200]}") from None
    usage = data.get("usage") or {}
    return text, usage.get("completion_tokens")


def generate_endpoint(problems: Sequence[Problem], endpoint: EndpointConfig,
                      config: GenerationConfig | None = None, settings: PromptSettings | None = None,
                      cache_path: str | Path | None = None, progress: bool = True) -> list[Generation]:
    """One request per (problem, sample), `endpoint.concurrency` in flight, each retried with backoff;
    finished requests go to the cache at once, so an interrupted run resumes where it stopped. Raises
    EndpointError after all other requests finished if some still failed (rerun to retry them)."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    cfg = config or GenerationConfig()
    cache = RequestCache(cache_path)
    temperature = cfg.effective_temperature
    jobs = []
    for problem, messages in zip(problems, build_prompts(problems, settings)):
        for k in range(cfg.n):
            seed = cfg.seed + k
            key = cache.key({"model": endpoint.served_model, "messages": messages, "t": temperature,
                             "top_p": cfg.top_p, "max": cfg.max_new_tokens, "seed": seed})
            jobs.append((problem.id, k, messages, seed, key))
    todo = [j for j in jobs if j[4] not in cache.done]
    failures: list[str] = []
    bar = _progress(len(jobs), "requests", progress)
    bar.update(len(jobs) - len(todo))

    def one(job) -> None:
        pid, k, messages, seed, key = job
        try:
            text, tokens = chat_completion(client, endpoint, messages, temperature=temperature, top_p=cfg.top_p,
                                           max_tokens=cfg.max_new_tokens, seed=seed)
        except EndpointError as exc:
            failures.append(f"{pid}#{k}: {exc}")
            return
        finally:
            bar.update(1)
        cache.add({"key": key, "problem_id": pid, "sample": k, "completion": text, "tokens": tokens})

    limits = httpx.Limits(max_connections=endpoint.concurrency, max_keepalive_connections=endpoint.concurrency)
    try:
        with httpx.Client(limits=limits) as client, ThreadPoolExecutor(max(1, endpoint.concurrency)) as pool:
            list(pool.map(one, todo))
    finally:
        bar.close()
    if failures:
        raise EndpointError(f"{len(failures)} of {len(jobs)} requests failed after {endpoint.retries} retries "
                            f"(finished ones are cached; rerun to resume). First: {failures[0]}")
    out = []
    for pid, k, _, _, key in jobs:
        rec = cache.done[key]
        out.append(Generation(pid, k, rec["completion"], rec.get("tokens")))
    return out


# --- a completions file -------------------------------------------------------------------------------------

def read_completions(path: str | Path, skipped: list | None = None) -> list[Generation]:
    """`{"problem_id", "completion"[, "sample"][, "tokens"]}` lines (a conversational completion is
    accepted). Samples are numbered per problem in file order unless given. Unreadable lines go to
    `skipped` as (line number, reason)."""
    from prosfi.trace.extract import completion_text

    out: list[Generation] = []
    counts: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                pid = rec["problem_id"]
                text = rec["completion"]
                if not isinstance(text, str):
                    text = completion_text(text)
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                if skipped is not None:
                    skipped.append((lineno, f"{type(exc).__name__}: {exc}"))
                continue
            pid = str(pid)
            sample = rec.get("sample")
            if not isinstance(sample, int):
                sample = counts.get(pid, 0)
            counts[pid] = max(counts.get(pid, 0), sample + 1)
            tokens = rec.get("tokens")
            out.append(Generation(pid, sample, text, tokens if isinstance(tokens, int) else None))
    return out


Generator = Callable[[Sequence[Problem]], list[Generation]]

__all__ = ["EndpointConfig", "EndpointError", "Generation", "GenerationConfig", "Generator", "PromptSettings",
           "RequestCache", "build_prompts", "chat_completion", "chat_url", "generate_endpoint", "generate_hf",
           "generate_vllm", "load_hf", "read_completions"]
