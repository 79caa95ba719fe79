"""The shapes other frameworks already speak, built from one scored `Outcome` (or a `prosfi score` record).

OpenRLHF (`--reward.remote_url`): `{"query", "prompts", "labels"}` -> `{"rewards", "scores", "extra_logs"}`,
rewards numeric (a masked sample gets 0.0 and `extra_logs["prosfi/masked"] = 1`). verl: `{"score", ...}` with
the components as floats. NeMo-Gym `/verify`: `{reward, mask_sample, failure_kind, failure_reason}`.
Domain-free: nothing here looks at what kind of problem it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem


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


def completion_from_query(query: str, prompt: str | None) -> str:
    """The response part of OpenRLHF's `query` (prompt + response): the text after the prompt."""
    if prompt:
        if query.startswith(prompt):
            return query[len(prompt):]
        at = query.rfind(prompt)
        if at >= 0:
            return query[at + len(prompt):]
    return query


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
        try:
            label = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not a JSON problem: {exc}") from None
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


def response_text(response: Any) -> str:
    """The policy's text from a NeMo-Gym / OpenAI Responses object, a message list, or a plain string."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        if "output_text" in response and isinstance(response["output_text"], str):
            return response["output_text"]
        if "output" in response:
            return response_text(response["output"])
        if "content" in response:
            return response_text(response["content"])
        if isinstance(response.get("text"), str):
            return response["text"]
        return ""
    if isinstance(response, list):
        parts = [response_text(x) for x in response
                 if not (isinstance(x, dict) and x.get("role") in ("user", "system", "developer"))]
        return "".join(parts)
    raise TypeError(f"response must be text, an object or a list, not {type(response).__name__}")


__all__ = ["COMPONENTS", "Outcome", "completion_from_query", "components", "nemo_response", "openrlhf_response",
           "parse_problem", "response_text", "verified_fraction", "verl_result"]
