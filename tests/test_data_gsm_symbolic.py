"""GSM-Symbolic through reasoning-gym: answers the library accepts, gold chains read from its worked
solutions (a reported fraction), every gold chain earning the top reward."""

from __future__ import annotations

import pytest

pytest.importorskip("reasoning_gym")

from prosfi.data.gsm_symbolic import generate
from prosfi.data.quant_gold import gold_completion


@pytest.fixture(scope="module")
def problems():
    return generate(40, seed=5)


def test_answers_are_the_librarys_own(problems):
    import reasoning_gym

    ds = reasoning_gym.create_dataset("gsm_symbolic", size=40, seed=5)
    assert len(problems) == 40
    for i, p in enumerate(problems):
        assert p.id == f"gsm_symbolic-5-{i:04d}"
        assert ds.score_answer(p.answer["value"], ds[i]) == 1.0
        assert "Do not include units" not in p.question
        p.validate()


def test_a_good_share_has_gold_chains_and_the_rest_say_why(problems):
    with_gold = [p for p in problems if p.extra.get("gold_steps")]
    assert len(with_gold) >= len(problems) // 3
    for p in problems:
        assert ("gold_steps" in p.extra) != ("gold_issue" in p.extra)


def test_every_gold_chain_earns_the_top_reward(problems):
    from prosfi.rewards import score_batch
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    from prosfi.domains import get_domain

    # the builder maps the worked solution's numbers; the chain rules then keep only the chains that compute
    # the answer from what the question states (a `* 2` for "the Lee twins" is a count the question never
    # states): what every consumer reads is the domain's gold completion, which must earn the top reward
    with_gold = [p for p in problems if p.extra.get("gold_steps")]
    kept = [(p, t) for p in with_gold if (t := get_domain("quantity").gold_completion(p)) is not None]
    assert len(kept) >= 0.8 * len(with_gold)
    with Verifier(VerifierConfig(workers=0)) as v:
        results = score_batch([p for p, _ in kept], [t for _, t in kept], v)
    assert [r.reward for r in results] == [1.0] * len(kept)


def test_deterministic_and_eval_spec():
    from prosfi.eval.sources import load_source

    a = [p.to_dict() for p in generate(5, seed=9)]
    assert a == [p.to_dict() for p in generate(5, seed=9)]
    src = load_source("gsm_symbolic:4")
    assert len(src.problems) == 4 and {src.group(p)[0] for p in src.problems} == {"gsm_symbolic"}
