"""Completions from an OpenAI-compatible chat endpoint (`vllm serve`, `trl vllm-serve`, a hosted API).

One request per (problem, sample) with seed `seed + sample`, a bounded number in flight, each retried
with exponential backoff and jitter (`prosfi.retry.Backoff`, shared with the serve client) on connection
errors, 408/409/429 and 5xx; every finished request is appended to a JSONL cache at once, so an interrupted
evaluation resumes where it stopped. httpx is imported inside the functions that send requests.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prosfi import jsonl
from prosfi.data.problem import Problem
from prosfi.eval.generate import Generation, GenerationConfig, PromptSettings, build_prompts, progress_bar
from prosfi.retry import Backoff

MAX_BACKOFF_S = 60.0  # the longest wait between two tries of one request


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
        if self.path and self.path.is_file():
            rows, _ = jsonl.read_objects(str(self.path))  # a torn or foreign line is skipped, never fatal
            for _, rec in rows:
                if isinstance(rec.get("key"), str) and isinstance(rec.get("completion"), str):
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
                    fh.write(jsonl.dumps(rec) + "\n")


@dataclass
class EndpointConfig:
    url: str = field(metadata={"help": "OpenAI-compatible base URL, e.g. http://localhost:8000/v1"})
    served_model: str = field(metadata={"help": "the model name the server serves"})
    concurrency: int = field(default=8, metadata={"help": "endpoint requests in flight at once"})
    retries: int = field(default=5, metadata={"help": "retries per endpoint request, with backoff (connection "
                                              "errors, timeouts, 408, 409, 429, 5xx)"})
    backoff_s: float = field(default=1.0, metadata={"help": "first retry delay in seconds; doubles each retry "
                                                "(at most 60 s, with jitter: prosfi.retry.Backoff)"})
    timeout_s: float = field(default=600.0, metadata={"help": "seconds per endpoint request"})
    api_key: str | None = field(default=None, metadata={"help": "bearer token (default: $OPENAI_API_KEY)"})


def _post_with_retries(client, url: str, payload: dict, cfg: EndpointConfig, headers: dict) -> dict:
    import httpx

    last = ""
    for _, wait in Backoff(cfg.retries, cfg.backoff_s, MAX_BACKOFF_S).attempts():
        time.sleep(wait)
        try:
            resp = client.post(url, json=payload, headers=headers, timeout=cfg.timeout_s)
            if resp.status_code == 200:
                return resp.json()
            last = f"HTTP {resp.status_code}: {resp.text[:200]}"
            if resp.status_code not in (408, 409, 429) and resp.status_code < 500:
                break  # a request the server will never accept: do not retry
        except httpx.ConnectError as exc:
            last = f"ConnectError: {exc} (is the server running at {url}?)"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        except ValueError:  # a 200 whose body is not JSON (UnicodeDecodeError is a ValueError too)
            last = f"the server's answer is not JSON: {resp.content[:100]!r}"
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
        raise EndpointError(f"unexpected response (no choices[0].message.content): {str(data)[:200]}") from None
    if not isinstance(text, str):
        raise EndpointError(f"unexpected response (content is not a string): {str(data)[:200]}")
    usage = data.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return text, tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


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
    bar = progress_bar(len(jobs), "requests", progress)
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


__all__ = ["EndpointConfig", "EndpointError", "RequestCache", "chat_completion", "chat_url", "generate_endpoint"]
