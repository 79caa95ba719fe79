"""The Domain interface: `domain_for` picks a domain per kind; the logic domain is exactly the logic
modules it wraps (same traces, answers, chain results, gold, prompts); the quantity domain does the same
jobs for quantity problems; prompt rows and scoring go through the Domain for mixed batches."""

from __future__ import annotations

import json

import pytest

from prosfi.chain import ChainBatch, ChainConfig, Formulas
from prosfi.data import gold, kk, prompts
from prosfi.data.problem import Problem
from prosfi.domains import Domain, domain_for, domain_names, get_domain
from prosfi.domains import prompts as dprompts
from prosfi.trace.answer import answer_correct, parse_answer
from prosfi.trace.schema import parse_trace
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
PQA = Problem.from_dict({
    "id": "p1", "kind": "true_false_uncertain", "source": "toy", "question": "Is Tom alive?",
    "premises": [{"id": "h1", "formal": "∀ x, Cat x → Alive x"}, {"id": "h2", "formal": "Cat tom"}],
    "goal": "Alive tom", "options": OPTIONS, "answer": "A", "difficulty": 1})
KK = kk.generate(kk.KKConfig(people=2), 1, 3)[0]
GOOD = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", '
        '"rule": "mp"}]</steps><answer>A</answer>')


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(workers=0)) as v:
        yield v


def test_domain_for_picks_by_kind_and_rejects_unknown_kinds():
    assert domain_for(PQA).name == domain_for(KK).name == "logic"
    assert domain_for("true_false_uncertain") is domain_for(PQA)  # one instance per domain
    assert set(domain_names()) == {"logic", "quantity"}
    assert isinstance(get_domain("logic"), Domain)
    with pytest.raises(ValueError, match="no domain for problem kind"):
        domain_for("sudoku")
    with pytest.raises(ValueError, match="unknown domain"):
        get_domain("sudoku")


def test_logic_domain_reads_completions_and_answers_as_the_trace_modules_do():
    d = domain_for(PQA)
    for text in (GOOD, GOOD.replace("<answer>A", "<answer>B"), "no blocks", GOOD.replace('"h1", ', "")):
        assert d.parse_trace(PQA, text) == parse_trace(text, ["h1", "h2"])
    for problem, text in ((PQA, "A"), (PQA, "(C) Uncertain"), (PQA, "maybe"),
                          (KK, gold.answer_text(KK)), (KK, "Zoey is a knave")):
        claim = d.parse_answer(problem, text)
        assert claim == parse_answer(problem, text)
        assert d.answer_correct(problem, claim) == answer_correct(problem, claim)


def test_logic_chain_check_through_the_domain_gives_the_chain_modules_result(verifier):
    d = domain_for(PQA)
    trace = d.parse_trace(PQA, GOOD).trace
    claim = d.parse_answer(PQA, "A")
    ours = ChainBatch([d.chain_check(PQA, trace.steps, claim, ChainConfig(), d.batch_state())]).check(verifier)
    from prosfi.chain import ChainCheck

    theirs = ChainBatch([ChainCheck(PQA, trace.steps, claim, ChainConfig(), Formulas())]).check(verifier)
    def view(r):  # everything but the timings
        return [s.to_json() for s in r.steps], r.all_verified, r.established, r.reason

    assert view(ours[0]) == view(theirs[0]) and ours[0].chain_valid


def test_logic_gold_and_prompt_rows_are_the_data_modules_own(verifier):
    d = domain_for(KK)
    assert d.gold_completion(KK, verifier) == gold.gold_completion(KK, verifier) is not None
    assert d.gold_steps(KK) == gold.gold_steps(KK)
    assert d.sloppy_completion(KK) == gold.sloppy_completion(KK)
    assert d.answer_text(PQA) == "A" and d.user_prompt(PQA) == prompts.user_prompt(PQA)
    for few in (0, 1):  # the system prompt, the worked examples as user/assistant turns, the problem
        for p, row in zip([PQA, KK], dprompts.prompt_rows([PQA, KK], few_shot=few)):
            shots = [m for ex, text in prompts.few_shot_examples(p.kind, few)
                     for m in ({"role": "user", "content": prompts.user_prompt(ex)},
                               {"role": "assistant", "content": text})]
            assert len(shots) == 2 * few
            assert row["prompt"] == [{"role": "system", "content": prompts.SYSTEM_PROMPT}, *shots,
                                     {"role": "user", "content": prompts.user_prompt(p)}]
    assert dprompts.to_sft_row(KK, "x") == {"prompt": dprompts.prompt_messages(KK),
                                            "completion": [{"role": "assistant", "content": "x"}]}
    assert dprompts.to_prompt_row(PQA, "custom")["prompt"][0]["content"] == "custom"


def test_logic_content_key_ignores_id_and_premise_order():
    d = domain_for(PQA)
    moved = Problem.from_dict({**PQA.to_dict(), "id": "other",
                               "premises": [p for p in reversed(PQA.to_dict()["premises"])]})
    assert d.content_key(moved) == d.content_key(PQA) != d.content_key(KK)
    assert json.loads(dprompts.to_prompt_row(PQA)["problem"])["id"] == "p1"


def test_logic_step_object_is_the_written_form():
    d = domain_for(PQA)
    step = d.parse_trace(PQA, GOOD).trace.steps[0]
    assert d.step_object(step) == {"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", "rule": "mp"}
    assert d.as_step(d.step_object(step)) == step


# ------------------------------------------------------------------ the quantity domain
QTY = Problem.from_dict({
    "id": "q1", "kind": "quantity", "source": "physics", "difficulty": "easy",
    "question": "A car covers 120 km in 1.5 h. What is its average speed?",
    "givens": [{"id": "g1", "value": "120", "unit": "km", "text": "120 km"},
               {"id": "g2", "value": "1.5", "unit": "h", "text": "covers it in 1.5 h"}],
    "target": {"name": "speed", "unit": "km/h"}, "answer": {"value": "80", "unit": "km/h"},
    "gold_steps": [{"id": "s1", "expr": "g1 / g2", "value": 80, "unit": "km/h", "name": "speed"}]})


def test_quantity_domain_does_every_job_of_the_interface():
    d = domain_for(QTY)
    assert d.name == "quantity" and d.kinds == ("quantity",) and d.groundedness(QTY) is None  # CSP groundedness: logic
    prompt = d.user_prompt(QTY)
    assert "g1 = 120 km" in prompt and 'g2 = 1.5 h  ("covers it in 1.5 h")' in prompt and "Find: speed (in km/h)" in prompt
    assert d.answer_text(QTY) == "80 km/h" and d.gold_steps(QTY)[0]["expr"] == "g1 / g2"
    gold_text = d.gold_completion(QTY)
    trace = d.parse_trace(QTY, gold_text)
    assert trace.ok and d.answer_correct(QTY, d.parse_answer(QTY, trace.trace.answer))
    result = d.check_chain(QTY, trace.trace.steps, d.parse_answer(QTY, trace.trace.answer))
    assert result.chain_valid
    sloppy = d.parse_trace(QTY, d.sloppy_completion(QTY)).trace
    assert not d.check_chain(QTY, sloppy.steps, d.parse_answer(QTY, sloppy.answer)).chain_valid
    assert {c.record: c.guards for c in d.eval_columns}["dimension_errors"] == ("dimension",)
    moved = Problem.from_dict({**QTY.to_dict(), "id": "other"})
    assert d.content_key(moved) == d.content_key(QTY) != d.content_key(PQA)
    assert d.parse_trace(QTY, "no blocks").reason == "missing </think>"


def test_the_system_prompt_states_the_rules_a_recipe_sets(tmp_path):
    """A recipe's `chain_quantity_max_ops` reaches the prompt the policy is trained and evaluated with, not
    only the checker: the prompt never promises a limit the checker does not enforce."""
    import yaml

    from prosfi.eval import build_prompts
    from prosfi.eval.cli import prompt_settings
    from prosfi.train.rows import grpo_dataset

    three = ChainConfig(quantity_max_ops=3)
    rows = dprompts.prompt_rows([PQA, QTY], chain=three)
    assert rows[0]["prompt"][0]["content"] == prompts.SYSTEM_PROMPT  # logic states no quantity rule
    assert "At most 3 operations per step" in rows[1]["prompt"][0]["content"]
    assert "At most 3 operations" not in dprompts.prompt_rows([QTY])[0]["prompt"][0]["content"]
    assert domain_for(QTY).prompt_for(ChainConfig()) == domain_for(QTY).system_prompt  # unchanged rules
    assert "At most 3 operations" in grpo_dataset([QTY], chain=three)[0]["prompt"][0]["content"]
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"dataset": "physics", "chain_quantity_max_ops": 3}))
    assert "At most 3 operations" in build_prompts([QTY], prompt_settings(str(recipe)))[0][0]["content"]


def test_quantity_prompt_rows_and_sft_rows_go_through_the_domain(verifier):
    rows = dprompts.prompt_rows([PQA, QTY])
    assert rows[0]["prompt"][0]["content"] == prompts.SYSTEM_PROMPT  # logic keeps its prompt
    assert rows[1]["prompt"][0]["content"] == domain_for(QTY).system_prompt != prompts.SYSTEM_PROMPT
    assert rows[1]["kind"] == "quantity" and rows[1]["answer"] == "80 km/h"
    assert Problem.from_dict(json.loads(rows[1]["problem"])).givens == QTY.givens

    from prosfi.rewards.funcs import make_reward_funcs
    from prosfi.train.rows import sft_dataset

    sft = sft_dataset([PQA, QTY], verifier=verifier)
    reward = make_reward_funcs("prosfi", verifier=verifier)[0]
    scores = reward(prompts=None, completions=[r["completion"] for r in sft],
                    problem=[rows[0]["problem"], rows[1]["problem"]])
    assert scores == [1.0, 1.0]


def test_train_specs_draw_quantity_problems():
    from prosfi.train.problems import generate_problems

    problems = generate_problems("physics", 4, seed=3, difficulty="easy,hard")
    assert [p.difficulty for p in problems] == ["easy", "easy", "hard", "hard"]
    assert all(domain_for(p).gold_completion(p) for p in problems)
    with pytest.raises(ValueError, match="dataset_path"):
        generate_problems("gsm8k", 2)


def test_prm_labels_and_step_verdicts_for_quantity_chains(verifier):
    from prosfi.prm.label import label_completions
    from prosfi.prm.steps import chain_verdicts

    d = domain_for(QTY)
    items = [{"problem_id": "q1", "completion": d.gold_completion(QTY)},
             {"problem_id": "q1", "completion": d.sloppy_completion(QTY)}]
    records, stats = label_completions({"q1": QTY}, items, verifier)
    assert [r["labels"] for r in records] == [[True], [False]] and stats.format_failures == 0
    assert records[0]["prompt"] == d.user_prompt(QTY) and '"expr": "g1 / g2"' in records[0]["completions"][0]
    assert "grounded" not in records[0]  # CSP groundedness is a logic notion
    logic_chain = [{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom"}]
    assert chain_verdicts([QTY, PQA], [QTY.extra["gold_steps"], logic_chain], verifier) == [["valid"], ["valid"]]


def test_quantity_csp_twins_are_checkable_but_wrong_for_the_problem(verifier):
    from prosfi.prm.negatives import csp_pairs

    eggs = Problem.from_dict({
        "id": "eggs", "kind": "quantity", "source": "gsm8k", "question": "16 eggs, eats 3, bakes 4, sells at $2.",
        "givens": [{"id": "g1", "value": "16", "unit": ""}, {"id": "g2", "value": "3", "unit": ""},
                   {"id": "g3", "value": "4", "unit": ""}, {"id": "g4", "value": "2", "unit": "USD"}],
        "answer": {"value": "18", "unit": "USD"},
        "gold_steps": [{"id": "s1", "expr": "g1 - g2 - g3", "value": 9, "unit": ""},
                       {"id": "s2", "expr": "s1 * g4", "value": 18, "unit": "USD"}]})
    stats: dict = {}
    pairs = csp_pairs(eggs, verifier, per_kind=2, stats=stats)
    kinds = {p["kind"] for p in pairs}
    assert kinds == {"wrong_operand", "wrong_principle"}
    d = domain_for(eggs)
    for p in pairs:
        assert p["rejected"] != p["chosen"] and p["rejected"]["value"] not in (9, 18)
        result = d.check_chain(eggs, p["prefix"] + [p["rejected"]])  # valid arithmetic as the last step
        assert result.steps[-1].verdict == "valid"
    assert csp_pairs(QTY, verifier) == []  # `g1 * g2` (km*h) is checkable but has not the target's unit
