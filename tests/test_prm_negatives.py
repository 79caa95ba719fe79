"""CSP and natural negatives: every negative valid and ungrounded, every positive valid and grounded."""

from __future__ import annotations

import prm_support as S
import pytest

from prosfi.data.gold import gold_steps
from prosfi.domains.logic.gold_path import Groundedness
from prosfi.domains.logic.perturbations import next_grounded_step
from prosfi.prm.negatives import csp_pairs, natural_pairs
from prosfi.prm.steps import chain_verdicts
from prosfi.verify import Verifier, VerifierConfig


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as v:
        yield v


def _fol(n: int = 12, seed: int = 0, difficulty: str = "medium"):
    from prosfi.train.problems import generate_problems

    return generate_problems("proverqa_gen", n, seed=seed, difficulty=difficulty)


def _check_pair(problem, pair, verifier):
    g = Groundedness(problem)
    prefix = pair["prefix"]
    both = chain_verdicts([problem, problem], [prefix + [pair["chosen"]], prefix + [pair["rejected"]]], verifier)
    assert both[0][-1] == "valid" and both[1][-1] == "valid", pair  # both pass the verifier (and the guards)
    assert g.grounded(pair["chosen"]["conclusion"], "valid") is True
    assert g.grounded(pair["rejected"]["conclusion"], "valid") is False
    ids = {p.id for p in problem.premises} | {s["id"] for s in prefix}
    for step in (pair["chosen"], pair["rejected"]):
        assert set(step) == {"id", "dependencies", "conclusion", "rule"}
        assert set(step["dependencies"]) <= ids and step["id"] not in ids


def test_every_csp_negative_is_valid_and_ungrounded_and_every_positive_grounded(verifier):
    kinds = set()
    problems = _fol(12) + _fol(6, seed=1, difficulty="hard")
    for problem in problems:
        stats: dict = {}
        for pair in csp_pairs(problem, verifier, margin=1.0, stats=stats):
            _check_pair(problem, pair, verifier)
            assert pair["margin"] == 1.0 and pair["problem_id"] == problem.id
            assert pair["chosen"]["conclusion"] != pair["rejected"]["conclusion"]
            kinds.add(pair["kind"])
    assert kinds == {"wrong_operand", "wrong_principle"}


def test_negative_conclusions_are_written_like_gold_steps(verifier):
    for problem in _fol(6):
        for pair in csp_pairs(problem, verifier):
            c = pair["rejected"]["conclusion"]
            assert not c.startswith("¬") or c.startswith("¬ ")  # no spacing tell between gold and negative


def test_natural_negatives_from_sampled_chains(verifier):
    from prosfi.domains.logic.perturbations import consequences

    pairs_seen = 0
    for problem in _fol(10):
        gold = gold_steps(problem)
        # a sampled chain that wanders off: the first gold step, then a valid step off the gold path
        off = [s for _, _, s in consequences(problem, gold[:1])
               if not Groundedness(problem).on_gold_path(s["conclusion"])]
        if not off:
            continue
        chain = [gold[0], off[0]]
        for pair in natural_pairs(problem, [chain], verifier, margin=0.5):
            _check_pair(problem, pair, verifier)
            assert pair["kind"] == "natural" and pair["margin"] == 0.5
            assert pair["prefix"] == chain[:1] and pair["rejected"] == off[0]
            pairs_seen += 1
    assert pairs_seen >= 3


def test_next_grounded_step_rewrites_citations_to_the_prefix():
    problem = next(p for p in _fol(6) if len(gold_steps(p)) >= 2)
    gold = gold_steps(problem)
    renamed = [{**gold[0], "id": "a7"}]
    nxt = next_grounded_step(problem, renamed, gold)
    assert nxt["conclusion"] == gold[1]["conclusion"] and nxt["id"] == "s2"
    assert "a7" in nxt["dependencies"] or gold[0]["id"] not in gold[1]["dependencies"]
    assert next_grounded_step(problem, gold, gold) is None  # all derived


def test_groundedness_definition(verifier):
    problem = _fol(1)[0]
    g = Groundedness(problem)
    assert g.defined and g.grounded(gold_steps(problem)[0]["conclusion"], "valid") is True
    assert g.grounded(gold_steps(problem)[0]["conclusion"], "invalid") is None
    kk = S.problems(1, 0)[0]
    gk = Groundedness(kk)
    atom, value = next(iter(kk.assignment.items()))
    assert gk.grounded(atom if value else f"¬ {atom}", "valid") is True
