"""The shapes other frameworks already speak, built from one scored `Outcome` (or a `prosfi score` record).

OpenRLHF (`--reward.remote_url`): `{"query", "prompts", "labels"}` -> `{"rewards", "scores", "extra_logs"}`,
rewards numeric (a masked sample gets 0.0 and `extra_logs["prosfi/masked"] = 1`). verl: `{"score", ...}` with
the components as floats. NeMo-Gym `/verify`: `{reward, mask_sample, failure_kind, failure_reason}`.
Domain-free: nothing here looks at what kind of problem it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem
from prosfi.jsonl import loads
from prosfi.trace.extract import with_reasoning


@dataclass
class Outcome:
    """One completion's answer: the `prosfi score` record plus what the framework shapes need."""

    record: dict
    masked: str | None = None  # failure kind when infrastructure failed
    failure_reason: str = ""

    def to_json(self) -> dict:
        if self.masked is None:
            return self.record
        return {**self.record, "reward": None, "masked": True, "failure_kind": self.masked,
                "failure_reason": self.failure_reason}


COMPONENTS = ("format_ok", "answer_correct", "chain_valid", "verified_fraction")


# Special tokens a tokenizer decodes with `skip_special_tokens=False` (OpenRLHF's query): ChatML/Qwen
# `<|im_end|>`, `<|endoftext|>`, Llama 3 `<|eot_id|>`, Phi `<|end|>`, DeepSeek `<｜end▁of▁sentence｜>`,
# Llama 2 / Mistral `</s>`, Gemma `<end_of_turn>` / `<eos>`. Only a run of them at the very end is dropped.
_TRAILING_SPECIAL = re.compile(
    r"(?:\s*(?:<\|[A-Za-z0-9_.\-]{1,40}\|>|<｜[^｜<>]{1,40}｜>|</s>|<eos>|<end_of_turn>|<\|?endoftext\|?>))+\s*\Z")


def strip_special_tokens(text: str) -> str:
    """`text` without the special tokens (end of turn, end of text, padding) decoded at its end."""
    m = _TRAILING_SPECIAL.search(text[-4096:]) if "<" in text[-4096:] else None
    if m is None:
        return text
    return text[:len(text) - (len(text[-4096:]) - m.start())]


def completion_from_query(query: str, prompt: str | None) -> str:
    """The response part of OpenRLHF's `query` (prompt + response, decoded with special tokens kept): the
    text after the prompt, without the end-of-turn / end-of-text tokens the tokenizer decoded at its end."""
    if prompt:
        if query.startswith(prompt):
            query = query[len(prompt):]
        else:
            at = query.rfind(prompt)
            if at >= 0:
                query = query[at + len(prompt):]
    return strip_special_tokens(query)


def parse_problem(label: Any, preloaded: Mapping[str, Problem]) -> Problem:
    """A label / ground truth: a Problem object, its JSON string, or a preloaded problem's id (ValueError)."""
    if isinstance(label, Problem):
        return label
    if isinstance(label, str):
        if label in preloaded:
            return preloaded[label]
        text = label.strip()
        if not text.startswith("{"):
            raise ValueError(f"unknown problem id {label[:80]!r} (not preloaded with --data, not a JSON object)")
        label, why = loads(text)  # the body's depth bound does not reach inside a string: never raises
        if why is not None:
            raise ValueError(f"not a JSON problem: {why}")
    if isinstance(label, dict):
        return Problem.from_dict(label)
    raise ValueError(f"a problem must be an object, its JSON string or a preloaded id, not {type(label).__name__}")


def verified_fraction(record: Mapping) -> float:
    """Verified steps / steps of a `prosfi score` record (no steps: 1.0 for a valid chain, else 0.0)."""
    steps = record.get("steps") or ()
    if not steps:
        return 1.0 if record.get("chain_valid") else 0.0
    return sum(s.get("verdict") == "valid" for s in steps) / len(steps)


def components(record: Mapping, fraction: float | None = None) -> dict[str, float]:
    """The reward's parts as floats (verl logs them; OpenRLHF's extra_logs; NeMo's response)."""
    return {"format_ok": float(bool(record.get("format_ok"))),
            "answer_correct": float(bool(record.get("answer_correct"))),
            "chain_valid": float(bool(record.get("chain_valid"))),
            "verified_fraction": float(verified_fraction(record) if fraction is None else fraction)}


def verl_result(record: Mapping, masked: str | None = None) -> dict[str, Any]:
    """verl's `compute_score` dict: `score` plus float components (the same keys for every sample)."""
    reward = record.get("reward")
    out: dict[str, Any] = {"score": float(reward) if reward is not None and masked is None else 0.0}
    out.update(components(record))
    out["masked"] = 1.0 if masked is not None else 0.0
    return out


def openrlhf_response(outcomes: Sequence) -> dict[str, Any]:
    rewards, logs = [], {f"prosfi/{k}": [] for k in (*COMPONENTS, "masked")}
    failures = []
    for i, out in enumerate(outcomes):
        masked = out.masked is not None or out.record.get("reward") is None
        reward = 0.0 if masked else float(out.record["reward"])
        rewards.append(reward)
        for k, v in components(out.record).items():
            logs[f"prosfi/{k}"].append(v)
        logs["prosfi/masked"].append(1.0 if masked else 0.0)
        if masked:
            failures.append({"index": i, "failure_kind": out.masked or "unscored",
                             "failure_reason": out.failure_reason or out.record.get("reason", "")})
    scores = [min(1.0, max(0.0, r)) for r in rewards]
    return {"rewards": rewards, "scores": scores, "extra_logs": logs, "failures": failures}


def nemo_response(outcome) -> dict[str, Any]:
    rec = outcome.record
    masked = outcome.masked is not None
    reward = rec.get("reward")
    return {"reward": 0.0 if masked or reward is None else float(reward), "mask_sample": masked,
            "failure_kind": outcome.masked if masked else None,
            "failure_reason": outcome.failure_reason if masked else None,
            **components(rec), "result": rec}


def _texts(parts: Any) -> str:
    """The text of a content value: a string, a list of parts (`{"type": "output_text", "text"}`, ...) or None."""
    if parts is None:
        return ""
    if isinstance(parts, str):
        return parts
    if isinstance(parts, list):
        return "".join(p if isinstance(p, str) else str(p.get("text") or "") if isinstance(p, dict) else ""
                       for p in parts)
    if isinstance(parts, dict):
        return str(parts.get("text") or "")
    raise TypeError(f"content must be text, a list of parts or null, not {type(parts).__name__}")


def _reasoning(item: dict) -> list[str]:
    """An OpenAI Responses `reasoning` item's blocks: its `content` (reasoning_text parts) as one, else each
    part of its `summary`: NeMo-Gym's vLLM model server puts every `<think>` block of the text in one item,
    one summary part per block."""
    text = _texts(item.get("content"))
    if text.strip():
        return [text]
    summary = item.get("summary")
    parts = summary if isinstance(summary, list) else [summary] if summary else []
    return [_texts(p) for p in parts]  # an empty block is a block: `<think></think><think>B</think>` is two


def _inline(blocks: list[str], text: str) -> str:
    """The text with its reasoning put back. Two or more blocks mean the model wrote two `<think>` blocks:
    each goes back as its own block, so the completion is refused as `prosfi score` refuses the original
    (joined into one, a broken format would have been paid)."""
    if len(blocks) <= 1:
        return with_reasoning(blocks[0] if blocks else None, text)
    return "".join(f"<think>{b}</think>" for b in blocks) + text


def response_text(response: Any) -> str:
    """The policy's text from a NeMo-Gym / OpenAI Responses object, a message list, or a plain string.

    Reasoning delivered apart from the answer — a Responses `reasoning` item before the message, a chat
    message's `reasoning_content` — becomes the text's `<think>` block, as if the model had written it inline."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        if "output" in response and response["output"] is not None:
            return response_text(response["output"])
        if isinstance(response.get("output_text"), str):
            return response["output_text"]
        if response.get("type") == "reasoning":
            return _inline(_reasoning(response), "")
        if "content" in response or "reasoning_content" in response:
            text = _texts(response.get("content"))
            return with_reasoning(response.get("reasoning_content") or response.get("reasoning"), text)
        if isinstance(response.get("text"), str):
            return response["text"]
        return ""
    if isinstance(response, list):
        reasoning: list[str] = []
        parts: list[str] = []
        for x in response:
            if isinstance(x, dict) and x.get("role") in ("user", "system", "developer"):
                continue
            if isinstance(x, dict) and x.get("type") == "reasoning":
                reasoning.extend(_reasoning(x))  # put back before the message text
                continue
            parts.append(response_text(x))
        return _inline(reasoning, "".join(parts))
    raise TypeError(f"response must be text, an object or a list, not {type(response).__name__}")


__all__ = ["COMPONENTS", "Outcome", "completion_from_query", "components", "nemo_response", "openrlhf_response",
           "parse_problem", "response_text", "strip_special_tokens", "verified_fraction", "verl_result"]
