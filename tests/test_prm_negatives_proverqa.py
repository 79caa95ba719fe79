"""CSP negatives on ProverQA-hard shapes (long premise lists, `∀x` rules over several constants, ground rules
about one person, exclusive ors): the fixture `proverqa_hard_negatives.json` is written in the public dev
files' format (hand-made, not real records). Every pair is valid under the verifier, off the gold
derivation and not a restatement; both kinds appear; most gold steps get a twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from prosfi.domains.logic.gold_path import Groundedness, canonical_text
from prosfi.domains.logic.perturbations import known_literals, rules
from prosfi.eval.sources import load_source
from prosfi.prm.negatives import csp_pairs
from prosfi.prm.steps import chain_verdicts
from prosfi.verify import Verifier, VerifierConfig

SHAPES = Path(__file__).parent / "fixtures" / "proverqa_hard_negatives.json"


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as v:
        yield v


def _problems():
    return load_source(f"proverqa:hard={SHAPES}").problems


def _check(problem, pair, verifier):
    g = Groundedness(problem)
    prefix = pair["prefix"]
    both = chain_verdicts([problem, problem], [prefix + [pair["chosen"]], prefix + [pair["rejected"]]], verifier)
    assert both[0][-1] == "valid" and both[1][-1] == "valid", pair
    assert g.on_gold_path(pair["chosen"]["conclusion"]) and not g.on_gold_path(pair["rejected"]["conclusion"])
    assert canonical_text(pair["rejected"]["conclusion"]) not in known_literals(problem, prefix)


def test_rules_read_ground_implications_and_exclusive_ors():
    p = _problems()[0]
    by_id = {}
    for rid, var, _, _ in rules(p):
        by_id.setdefault(rid, []).append(var)
    forms = {h.id: h.formal for h in p.premises}
    xor = next(i for i, f in forms.items() if f.startswith("Xor'"))
    ground = next(i for i, f in forms.items() if "→" in f and not f.startswith("∀"))
    assert by_id[xor] == [None] * 4 and by_id[ground] == [None]


def test_proverqa_hard_shapes_give_valid_off_gold_pairs_of_both_kinds(verifier):
    kinds, stats = set(), {}
    for problem in _problems():
        for pair in csp_pairs(problem, verifier, stats=stats):
            _check(problem, pair, verifier)
            kinds.add(pair["kind"])
    assert kinds == {"wrong_operand", "wrong_principle"}
    assert stats["gold_steps_with_pairs"] == stats["gold_steps"]  # every gold step here has a twin


def test_generated_hard_problems_most_gold_steps_get_a_twin(verifier):
    from prosfi.train.problems import generate_problems

    stats: dict = {}
    for problem in generate_problems("proverqa_gen", 4, seed=0, difficulty="hard"):
        for pair in csp_pairs(problem, verifier, per_kind=2, stats=stats):
            _check(problem, pair, verifier)
    assert 2 * stats["gold_steps_with_pairs"] > stats["gold_steps"], stats
