"""FoVer labelling: step labels agree with the verifier on fixed chains (issue #14)."""

from __future__ import annotations

import json

import pytest

from prosfi.data.problem import Premise, Problem
from prosfi.prm.label import chain_record, label_completions, step_label
from prosfi.verify import Verifier, VerifierConfig
from prosfi.verdict import Status, Verdict


def _problem() -> Problem:
    return Problem(id="cats", kind="true_false_uncertain", goal="Alive tom", options={"A": "True", "B": "False",
                   "C": "Uncertain"}, answer="A",
                   premises=[Premise("h1", "∀ x, Cat x → Animal x"), Premise("h2", "Cat tom"),
                             Premise("h3", "∀ x, Animal x → Alive x")])


def _completion(steps: list[dict], answer: str = "A") -> str:
    return f"<think>\nx\n</think>\n<steps>\n{json.dumps(steps, ensure_ascii=False)}\n</steps>\n<answer>{answer}</answer>"


class _Undecided:
    """A real verifier that answers `unknown` for `Alive tom ∨ Cat tom` (a prover that gave up)."""

    def __init__(self, inner):
        self.inner = inner

    def check_many(self, entailments):
        out = self.inner.check_many(entailments)
        return [Verdict(Status.UNKNOWN, None, 0.0, "stub: gave up") if "Alive tom ∨ Cat tom" in e.conclusion else v
                for e, v in zip(entailments, out)]


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as v:
        yield _Undecided(v)


STEPS = [
    {"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Animal tom", "rule": "mp"},  # valid
    {"id": "s2", "dependencies": ["h3"], "conclusion": "Cat tom → Alive tom", "rule": "mp"},  # invalid
    {"id": "s3", "dependencies": ["h1", "h2"], "conclusion": "Animal tom", "rule": "mp"},  # repeat: rejected
    {"id": "s4", "dependencies": ["h2"], "conclusion": "Alive tom ∨ Cat tom", "rule": "?"},  # unknown: left out
    {"id": "s5", "dependencies": ["s9"], "conclusion": "Animal tom ∧ Cat tom", "rule": "mp"},  # unknown citation
    {"id": "s6", "dependencies": ["h3", "s1"], "conclusion": "Alive tom", "rule": "mp"},  # valid
]


def test_labels_follow_the_verifier_unknown_left_out_guarded_incorrect(verifier):
    p = _problem()
    records, stats = label_completions({p.id: p}, [{"problem_id": p.id, "completion": _completion(STEPS)}], verifier)
    (rec,) = records
    assert rec["verdicts"][:3] == ["valid", "invalid", "rejected"] and rec["verdicts"][4] == "valid"
    assert rec["verdicts"][3] in ("invalid", "error")  # the chain checker's verdict for a bad citation
    assert rec["labels"] == [True, False, False, False, True]
    assert [s["id"] for s in rec["steps"]] == ["s1", "s2", "s3", "s5", "s6"]
    assert rec["positions"] == [0, 1, 2, 4, 5]
    assert rec["first_error"] == 1
    assert rec["completions"] == [json.dumps(s, ensure_ascii=False) for s in rec["steps"]]
    assert rec["problem_id"] == "cats" and "Cat tom" in rec["prompt"]
    assert rec["grounded"] == [True, None, None, None, True]  # valid steps on the gold derivation
    assert stats.unknown_steps == 1 and stats.chains == 1
    assert stats.to_json()["incorrect_steps"] == 3


def test_a_fully_valid_chain_has_no_first_error_and_format_failures_are_counted(verifier):
    p = _problem()
    good = _completion([STEPS[0], {**STEPS[5], "id": "s2"}])
    items = [{"problem_id": p.id, "completion": good}, {"problem_id": p.id, "completion": "no steps here"},
             {"problem_id": "nope", "completion": good}]
    records, stats = label_completions({p.id: p}, items, verifier)
    assert [r["labels"] for r in records] == [[True, True]]
    assert records[0]["first_error"] is None and records[0]["chain_valid"] and records[0]["answer_correct"]
    assert stats.format_failures == 2 and stats.completions == 3


def test_step_label_table():
    assert step_label("valid") is True
    assert step_label("unknown") is None
    for v in ("invalid", "error", "rejected"):
        assert step_label(v) is False


def test_chain_record_keeps_the_verifier_label_after_the_first_error():
    p = _problem()
    rec, unknown = chain_record(p, STEPS[:3], ["invalid", "valid", "unknown"])
    assert rec["labels"] == [False, True] and rec["first_error"] == 0 and unknown == 1
