"""Gold traces: atomic steps the verifier proves, the right answer, and reward 1.0 under `prosfi`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.data import kk, pqa_gen
from prosfi.data.gold import gold_completion, gold_steps, step_entailments
from prosfi.data.problem import Problem, read_problems, write_problems
from prosfi.data.proverqa import problem_from_proverqa_record
from prosfi.domains.prompts import to_sft_row
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

FIXTURES = Path(__file__).parent / "fixtures"
FORMAT = re.compile(r"^<think>\n.*\n</think>\n<steps>\n(\[.*\])\n</steps>\n<answer>(.*)</answer>$", re.S)


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1)) as v:
        yield v


def _problems():
    out = []
    for people, depth in ((2, 2), (3, 2), (4, 3), (5, 2), (6, 2), (7, 2), (8, 2)):
        out += kk.generate(kk.KKConfig(people=people, depth=depth), count=2, seed=100 + people)
    for d in ("easy", "medium", "hard", "extra"):
        out += pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), count=3, seed=7)
    return out


PROBLEMS = _problems()


def test_gold_steps_are_atomic_and_each_is_proved_from_its_citations(verifier):
    for p in PROBLEMS:
        steps = gold_steps(p)
        assert steps is not None, p.id
        assert 1 <= len(steps) <= 64
        known = set(p.premise_map)
        conclusions = set(p.premise_map.values())
        for s in steps:
            assert 1 <= len(s["dependencies"]) <= 4 and set(s["dependencies"]) <= known, (p.id, s)
            assert s["conclusion"] not in conclusions, (p.id, s)  # nothing derived twice
            known.add(s["id"])
            conclusions.add(s["conclusion"])
        verdicts = verifier.check_many(step_entailments(p, steps))
        assert [v.status.value for v in verdicts] == ["valid"] * len(steps), p.id
        # no step is provable from nothing (no tautologies)
        empty = verifier.check_many([type(e)({}, e.conclusion) for e in step_entailments(p, steps)])
        assert all(v.status.value != "valid" for v in empty), p.id


def test_gold_answers_are_right_and_settled_by_steps():
    for p in PROBLEMS:
        text = gold_completion(p)
        m = FORMAT.match(text)
        assert m, text
        steps, answer = json.loads(m.group(1)), m.group(2)
        concl = {s["conclusion"] for s in steps}
        if p.kind == "assignment":
            for i, (name, atom) in enumerate(zip(p.extra["names"], p.atoms)):
                role = "knight" if p.assignment[atom] else "knave"
                assert f"({i + 1}) {name} is a {role}" in answer
                assert (atom if p.assignment[atom] else f"¬ {atom}") in concl
        else:
            assert answer == p.answer
            label = p.answer_label
            if label == "True":
                assert steps[-1]["conclusion"] == p.goal
            elif label == "False":
                assert steps[-1]["conclusion"] == f"¬ {p.goal}"
            else:
                assert p.goal not in concl and f"¬ {p.goal}" not in concl


def test_gold_traces_score_one_under_the_prosfi_reward(verifier):
    from prosfi.rewards import score_batch

    texts = [gold_completion(p, verifier) for p in PROBLEMS]
    results = score_batch(PROBLEMS, texts, verifier)
    assert [(p.id, r.reward) for p, r in zip(PROBLEMS, results)] == [(p.id, 1.0) for p in PROBLEMS]
    # and a wrong answer does not
    wrong = texts[-1].replace(f"<answer>{PROBLEMS[-1].answer}</answer>", "<answer>A</answer>"
                              if PROBLEMS[-1].answer != "A" else "<answer>B</answer>")
    assert score_batch([PROBLEMS[-1]], [wrong], verifier)[0].reward < 1.0


def _public():
    recs = json.loads((FIXTURES / "proverqa_dev.json").read_text(encoding="utf-8"))
    return [problem_from_proverqa_record(r, "hard") for r in recs]


def test_forward_chaining_agrees_with_generated_labels_and_scores_one(verifier):
    """Drop the stored derivation: forward chaining alone must reach the generator's label."""
    from prosfi.rewards import score_batch

    generated = [p for p in PROBLEMS if p.kind == "true_false_uncertain"]
    stripped = [Problem.from_dict({k: v for k, v in p.to_dict().items() if k != "proof"}) for p in generated]
    texts = [gold_completion(p) for p in stripped]
    assert all(t is not None for t in texts)
    assert [r.reward for r in score_batch(stripped, texts, verifier)] == [1.0] * len(stripped)


def test_public_records_get_gold_traces_by_forward_chaining(verifier):
    from prosfi.rewards import score_batch

    problems = _public()
    steps = [gold_steps(p) for p in problems]
    assert steps[0][-1]["conclusion"] == "¬ has_never_experienced_heartbreak Brecken"  # False
    assert [s["conclusion"] for s in steps[1]] == ["loyal Rex", "happy Rex", "¬ grumpy Rex"]  # True
    assert steps[2] == [{"id": "s1", "dependencies": ["h2", "h1"], "rule": "instantiation",
                         "conclusion": "plays_basketball Tom ∨ plays_volleyball Tom"}]  # Uncertain
    texts = [gold_completion(p, verifier) for p in problems]
    assert [r.reward for r in score_batch(problems, texts, verifier)] == [1.0, 1.0, 1.0]


def test_no_gold_trace_when_the_goal_is_a_rule_or_the_label_is_wrong():
    rule_goal, wrong = _public()[1], _public()[1]
    rule_goal.goal = "∀ x, dog x → loyal x"
    wrong.answer = "C"
    assert gold_completion(rule_goal) is None and gold_completion(wrong) is None


def test_sft_rows_pair_the_prompt_with_the_completion():
    p = PROBLEMS[0]
    row = to_sft_row(p, "<think>x</think>")
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["completion"] == [{"role": "assistant", "content": "<think>x</think>"}]


def test_gold_cli_writes_score_input_and_sft_rows(tmp_path, capsys):
    problems = tmp_path / "p.jsonl"
    rule_goal = _public()[1]
    rule_goal.goal = "∀ x, dog x → loyal x"
    write_problems([PROBLEMS[0], PROBLEMS[-1], rule_goal], problems)
    out = tmp_path / "gold.jsonl"
    assert main(["data", "gold", str(problems), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["problem_id"] for r in rows] == [PROBLEMS[0].id, PROBLEMS[-1].id]
    assert rows[0]["completion"] == gold_completion(PROBLEMS[0])
    assert "no gold trace for 1 problem(s) (no known derivation): pqa-hard-0012" in capsys.readouterr().err
    sft = tmp_path / "sft.jsonl"
    assert main(["data", "gold", str(problems), "--sft", "--no-verify", "-o", str(sft)]) == 0
    row = json.loads(sft.read_text(encoding="utf-8").splitlines()[1])
    assert row["completion"][0]["content"] == rows[1]["completion"]
    assert list(read_problems(problems))[1].id == row["problem_id"]
