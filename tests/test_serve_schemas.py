"""Request overrides are validated by pydantic models derived from the config dataclasses (prosfi.serve.schemas):
a new ChainConfig field is overridable with no edit here, and a bad key or JSON type names `chain.KEY`."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("pydantic")

from pydantic import ValidationError

from prosfi.chain import ChainConfig
from prosfi.serve.schemas import ChainOverrides, ScoreRequest


def _refused(body: dict) -> tuple[str, str]:
    with pytest.raises(ValidationError) as exc:
        ScoreRequest.model_validate({"completions": [], **body})
    first = exc.value.errors()[0]
    return ".".join(map(str, first["loc"])), first["msg"]


def test_every_chain_field_is_an_override_and_only_the_given_ones_are_set():
    assert set(ChainOverrides.model_fields) == {f.name for f in dataclasses.fields(ChainConfig)}
    body = ScoreRequest.model_validate({"completions": [], "chain": {"max_steps": 32, "quantity_rel_tol": 0}})
    assert body.chain.model_dump(exclude_unset=True) == {"max_steps": 32, "quantity_rel_tol": 0.0}
    assert ScoreRequest.model_validate({"completions": []}).chain.model_dump(exclude_unset=True) == {}


@pytest.mark.parametrize(("chain", "where"), [
    ({"max_steps": "ten"}, "chain.max_steps"),
    ({"max_steps": True}, "chain.max_steps"),  # a JSON bool is no count
    ({"max_steps": 3.0}, "chain.max_steps"),
    ({"max_steps": None}, "chain.max_steps"),  # null only where the field's default is unset
    ({"reject_unused": 1}, "chain.reject_unused"),
    ({"uncertain": "maybe"}, "chain.uncertain"),  # the field's choices
    ({"bogus": 1}, "chain.bogus"),
])
def test_a_bad_chain_override_names_its_key(chain, where):
    assert _refused({"chain": chain})[0] == where


def test_a_reward_mode_outside_the_modes_is_refused():
    assert _refused({"reward": "nope"})[0] == "reward"
    assert ScoreRequest.model_validate({"completions": [], "reward": "outcome"}).reward == "outcome"
