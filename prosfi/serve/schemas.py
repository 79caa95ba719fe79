"""Request bodies of every route as pydantic models: these classes are the documented contract."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScoreRequest(_Strict):
    problems: list[dict[str, Any]] = Field(default_factory=list,
                                           description="problems (prosfi Problem objects) this request uses")
    completions: list[Any] = Field(description='{"problem_id", "completion"} records, as in a completions JSONL')
    reward: str | None = Field(default=None, description="reward mode (default: the server's)")
    chain: dict[str, Any] = Field(default_factory=dict, description="ChainConfig overrides")


class CheckRequest(_Strict):
    checks: list[Any] = Field(description='{"id", "premises", "conclusion"} records, as `prosfi check` reads them')


class OpenRLHFRequest(BaseModel):  # OpenRLHF may add fields: ignored
    query: list[str] = Field(description="full texts, prompt included")
    prompts: list[str] = Field(default_factory=list, description="the prompts (stripped from each query)")
    labels: list[Any] = Field(description="per query: a problem (object or JSON string) or a preloaded id")


class VerifyRequest(BaseModel):  # NeMo-Gym style; extra fields (responses_create_params, ...) ignored
    response: Any = Field(description="the policy's text, or an OpenAI Responses object / message list")
    problem: Any = Field(default=None, description="a problem object or JSON string")
    problem_id: str | None = Field(default=None, description="or a preloaded problem's id")


__all__ = ["CheckRequest", "OpenRLHFRequest", "ScoreRequest", "VerifyRequest"]
