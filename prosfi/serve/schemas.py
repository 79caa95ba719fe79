"""Request bodies of every route as pydantic models: these classes are the documented contract."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from prosfi.chain.config import ChainConfig
from prosfi.rewards.config import ALL_MODES


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def overrides_model(cls: type, name: str) -> type[BaseModel]:
    """A pydantic model of a config dataclass's fields, every one optional, for a request that overrides some:
    an unknown key, a wrong JSON type (a string, a bool or 3.0 for an int) or a value outside the field's
    `choices` is a 422 naming `KEY`; ranges are the dataclass's own checks (`__post_init__`). The field's help
    is its description, so the OpenAPI schema documents each override."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        choices = f.metadata.get("choices")
        if choices:
            tp = Literal[tuple(choices)]  # type: ignore[valid-type]
        default = None if f.default is dataclasses.MISSING else f.default
        fields[f.name] = (tp, Field(default=default, description=f.metadata.get("help")))
    return create_model(name, __config__=ConfigDict(extra="forbid", strict=True), **fields)


ChainOverrides = overrides_model(ChainConfig, "ChainOverrides")


class ScoreRequest(_Strict):
    problems: list[dict[str, Any]] = Field(default_factory=list,
                                           description="problems (prosfi Problem objects) this request uses")
    completions: list[Any] = Field(description='{"problem_id", "completion"} records, as in a completions JSONL')
    reward: Literal[ALL_MODES] | None = Field(default=None,  # type: ignore[valid-type]
                                              description="reward mode (default: the server's)")
    chain: ChainOverrides = Field(default_factory=ChainOverrides,  # type: ignore[valid-type]
                                  description="ChainConfig overrides: the fields set here, the rest its defaults")


class CheckRequest(_Strict):
    checks: list[Any] = Field(description='{"id", "premises", "conclusion"} records, as `prosfi check` reads them')


class OpenRLHFRequest(BaseModel):  # OpenRLHF may add fields: ignored
    query: list[str] = Field(description="full texts, prompt included")
    prompts: list[str] = Field(default_factory=list, description="the prompts (stripped from each query)")
    labels: list[Any] = Field(description="per query: a problem (object or JSON string) or a preloaded id")


class VerifyRequest(BaseModel):
    """NeMo-Gym's `BaseVerifyRequest` (+ `problem`): its other fields (`responses_create_params`, a resources
    server's own) are kept and echoed, so the answer is a `BaseVerifyResponse` (the request plus `reward`)."""

    model_config = ConfigDict(extra="allow")
    response: Any = Field(description="the policy's text, or an OpenAI Responses object / message list")
    responses_create_params: Any = Field(default=None, description="echoed (NeMo-Gym's BaseVerifyResponse)")
    problem: Any = Field(default=None, description="a problem object or JSON string")
    problem_id: str | None = Field(default=None, description="or a preloaded problem's id")


__all__ = ["ChainOverrides", "CheckRequest", "OpenRLHFRequest", "ScoreRequest", "VerifyRequest", "overrides_model"]
