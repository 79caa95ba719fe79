"""Acceptance checks for issue #3 (traces, chain verification, rewards), written from the issue
and the design notes only.

Small problems are built by hand (a ProverQA-style rule chain with True, False and Uncertain
goals; 2- and 3-person Knights & Knaves), with completions for every way a chain can be right,
wrong, gamed or malformed. The `prosfi` reward must give exactly 1.0 to fully verified right
chains and put everything else at its level: format failure 0.0 < wrong answer 0.1 < right but
unverified 0.3. The same completions go through `prosfi score` and the TRL reward callables.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from prosfi.chain import ChainConfig
from prosfi.data.problem import Premise, Problem
from prosfi.rewards import RewardConfig, make_reward_funcs, read_audit, score_batch
from prosfi.verify import Verifier, VerifierConfig

ROOT = Path(__file__).resolve().parents[1]
FORMAT, WRONG, UNVERIFIED, TOP = 0.0, 0.1, 0.3, 1.0
OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}

PQA_PREMISES = [
    Premise("h1", "∀ x, Cat x → Mammal x", "All cats are mammals."),
    Premise("h2", "∀ x, Mammal x → Animal x", "All mammals are animals."),
    Premise("h3", "Cat tom", "Tom is a cat."),
    Premise("h4", "∀ x, Animal x → ¬ Plant x", "No animal is a plant."),
    Premise("h5", "∀ x, Plant x → Green x", "All plants are green."),
    Premise("h6", "Dog rex", "Rex is a dog."),
]


def _pqa(pid: str, goal: str, answer: str) -> Problem:
    return Problem(id=pid, kind="true_false_uncertain", source="proverqa", premises=list(PQA_PREMISES),
                   context="…", question=f"Is it true that {goal}?", goal=goal, options=dict(OPTIONS),
                   answer=answer)


def _kk(pid: str, names: list[str], claims: list[str], solution: dict[str, bool]) -> Problem:
    premises = [Premise(f"h{i + 1}", f"Knight {n} ↔ ({claim})", f"{n.title()} speaks.")
                for i, (n, claim) in enumerate(zip(names, claims))]
    return Problem(id=pid, kind="assignment", source="knights_knaves", premises=premises,
                   atoms=[f"Knight {n}" for n in names],
                   assignment={f"Knight {n}": solution[n] for n in names})


PROBLEMS = {p.id: p for p in [
    _pqa("pqa-true", "Animal tom", "A"),
    _pqa("pqa-false", "Plant tom", "B"),
    _pqa("pqa-unc", "Green tom", "C"),
    _pqa("pqa-mislabelled", "Mammal tom", "C"),  # the gold says Uncertain but the goal is provable
    _pqa("pqa-neg-mislabelled", "Plant tom", "C"),  # gold Uncertain, but ¬ goal is provable
    _pqa("pqa-rule", "∀ x, Cat x → Animal x", "A"),
    Problem(id="pqa-shuffled", kind="true_false_uncertain", premises=list(PQA_PREMISES), goal="Animal tom",
            options={"A": "Uncertain", "B": "True", "C": "False"}, answer="B"),
    Problem(id="pqa-custom-ids", kind="true_false_uncertain", goal="Animal tom", options=dict(OPTIONS), answer="A",
            premises=[Premise(f"p_{p.id}", p.formal) for p in PQA_PREMISES]),
    _kk("kk2", ["zoey", "oliver"], ["¬ Knight oliver", "Knight zoey ∧ Knight oliver"],
        {"zoey": True, "oliver": False}),
    _kk("kk3", ["alice", "bob", "carol"],
        ["Knight bob ∧ Knight carol", "¬ Knight alice ∨ ¬ Knight carol", "Knight bob ↔ Knight carol"],
        {"alice": False, "bob": True, "carol": False}),
]}


def step(sid: str, deps: list[str], conclusion: str, rule: str = "r") -> dict:
    return {"id": sid, "dependencies": deps, "conclusion": conclusion, "rule": rule}


def completion(steps, answer: str, think: str = "Reasoning in words.") -> str:
    body = steps if isinstance(steps, str) else json.dumps(steps, ensure_ascii=False)
    return f"<think>\n{think}\n</think>\n<steps>\n{body}\n</steps>\n<answer>{answer}</answer>"


S1 = step("s1", ["h1", "h3"], "Mammal tom", "instantiation + modus ponens")
S2 = step("s2", ["h2", "s1"], "Animal tom", "modus ponens")
S3 = step("s3", ["h4", "s2"], "¬ Plant tom", "modus ponens")
GOLD_TRUE = [S1, S2]
GOLD_FALSE = [S1, S2, S3]
# one statement per step (ChainConfig.max_rules)
KK2_GOLD = [step("s1", ["h2"], "Knight oliver → Knight zoey"), step("s2", ["h1", "s1"], "¬ Knight oliver"),
            step("s3", ["h1", "s2"], "Knight zoey")]
KK2_ANSWER = "(1) Zoey is a knight (2) Oliver is a knave"
KK3_GOLD = [step("s1", ["h3"], "Knight bob"), step("s2", ["h2", "s1"], "¬ Knight alice ∨ ¬ Knight carol"),
            step("s3", ["h1", "s1"], "Knight carol → Knight alice"), step("s4", ["s2", "s3"], "¬ Knight carol"),
            step("s5", ["h1", "s4"], "¬ Knight alice")]
KK3_ANSWER = "(1) Alice is a knave (2) Bob is a knight (3) Carol is a knave"
PAD = [step(f"p{k}", ["s2"], "Animal tom" + " ∨ Cat tom" * (k + 1)) for k in range(70)]

GOLD_TEXT = completion(GOLD_TRUE, "A")
RULE_GOAL = [step("s1", ["h1"], "∀ x, ¬ Mammal x → ¬ Cat x", "contraposition")]

# (name, problem id, completion text, expected reward under the default `prosfi` levels)
CASES = [
    # -- fully verified, right answer: exactly the top level
    ("gold-true", "pqa-true", GOLD_TEXT, TOP),
    ("gold-false", "pqa-false", completion(GOLD_FALSE, "B"), TOP),
    ("gold-uncertain", "pqa-unc", completion(GOLD_FALSE, "C"), TOP),
    ("gold-kk2", "kk2", completion(KK2_GOLD, KK2_ANSWER), TOP),
    ("gold-kk3", "kk3", completion(KK3_GOLD, KK3_ANSWER), TOP),
    ("gold-fence", "pqa-true",
     completion("```json\n" + json.dumps(GOLD_TRUE, ensure_ascii=False) + "\n```", "A"), TOP),
    ("gold-whitespace", "pqa-true",
     completion("\n\n   " + json.dumps(GOLD_TRUE, ensure_ascii=False, indent=2) + "   \n\n", " A "), TOP),
    ("gold-equivalent-neg-goal", "pqa-false",
     completion(GOLD_TRUE + [step("s3", ["h4", "s2"], "Plant tom → False")], "B"), TOP),
    ("gold-kk2-equivalent-literal", "kk2",
     completion([KK2_GOLD[0], step("s2", ["h1", "s1"], "Knight oliver → False"),
                 step("s3", ["h1", "s2"], "Knight zoey")], KK2_ANSWER), TOP),
    ("gold-ascii-escaped-json", "pqa-true",
     "<think>t</think>\n<steps>" + json.dumps(GOLD_FALSE, ensure_ascii=True) + "</steps>\n<answer>A</answer>", TOP),
    ("gold-extra-fields", "pqa-true", completion([{**S1, "note": "x"}, {**S2, "confidence": 0.9}], "A"), TOP),
    ("gold-trailing-whitespace", "pqa-true", "\n  " + GOLD_TEXT + "\n\n  ", TOP),
    ("gold-64-steps", "pqa-true", completion(GOLD_TRUE + PAD[:62], "A"), TOP),
    ("gold-rule-goal", "pqa-rule", completion(RULE_GOAL + [step("s2", ["h2", "s1"], "∀ x, Cat x → Animal x")], "A"),
     TOP),
    ("gold-rule-goal-alpha", "pqa-rule",
     completion(RULE_GOAL + [step("s2", ["h2", "s1"], "∀ y, Cat y → Animal y")], "A"), TOP),
    ("gold-shuffled-options", "pqa-shuffled", completion(GOLD_TRUE, "B"), TOP),
    ("gold-custom-premise-ids", "pqa-custom-ids",
     completion([step("s1", ["p_h1", "p_h3"], "Mammal tom"), step("s2", ["p_h2", "s1"], "Animal tom")], "A"), TOP),
    ("gold-equivalent-goal", "pqa-true",
     completion([S1, step("s2", ["h2", "s1"], "¬ ¬ Animal tom")], "A"), TOP),
    # -- right answer, chain not fully verified or not reaching the answer
    ("wrong-step", "pqa-true", completion([step("s1", ["h2", "h3"], "Animal tom")], "A"), UNVERIFIED),
    ("wrong-extra-step", "pqa-true", completion(GOLD_TRUE + [step("s3", ["s2"], "Plant tom")], "A"),
     UNVERIFIED),
    ("cite-everything", "pqa-true", completion([step("s1", ["h1", "h2", "h3", "h4"], "Animal tom")], "A"),
     UNVERIFIED),  # two rules in one step, and h4 is unused
    ("two-rules-one-step", "pqa-rule", completion([step("s1", ["h1", "h2"], "∀ x, Cat x → Animal x")], "A"),
     UNVERIFIED),
    ("kk2-both-statements-one-step", "kk2",
     completion([step("s1", ["h1", "h2"], "¬ Knight oliver"), step("s2", ["h1", "s1"], "Knight zoey")], KK2_ANSWER),
     UNVERIFIED),
    ("over-citation", "pqa-true",
     completion([step("s1", ["h1", "h2", "h3", "h4", "h5"], "Animal tom")], "A"), UNVERIFIED),
    ("tautology-no-deps", "pqa-true",
     completion(GOLD_TRUE + [step("s3", [], "Animal tom ∨ ¬ Animal tom")], "A"), UNVERIFIED),
    ("tautology-with-deps", "pqa-true",
     completion([step("s0", ["h3"], "Cat tom → Cat tom")] + GOLD_TRUE, "A"), UNVERIFIED),
    ("restatement", "pqa-true", completion([step("s0", ["h3"], "Cat tom")] + GOLD_TRUE, "A"), UNVERIFIED),
    ("restatement-alpha", "pqa-true",
     completion([step("s0", ["h1"], "∀ y, Cat y → Mammal y")] + GOLD_TRUE, "A"), UNVERIFIED),
    ("repeat", "pqa-true", completion([S1, step("s1b", ["h1", "h3"], "Mammal tom"), S2], "A"), UNVERIFIED),
    ("padding", "pqa-true", completion(GOLD_TRUE + PAD, "A"), UNVERIFIED),
    ("padding-65-steps", "pqa-true", completion(GOLD_TRUE + PAD[:63], "A"), UNVERIFIED),
    ("restatement-parens", "pqa-true", completion([step("s0", ["h3"], "((Cat tom))")] + GOLD_TRUE, "A"),
     UNVERIFIED),
    ("self-reference", "pqa-true", completion([step("s1", ["s1", "h1"], "Mammal tom"), S2], "A"), UNVERIFIED),
    ("forward-reference", "pqa-true",
     completion([step("s1", ["h2", "s2"], "Animal tom"), step("s2", ["h1", "h3"], "Mammal tom")], "A"),
     UNVERIFIED),
    ("unknown-reference", "pqa-true", completion([step("s1", ["h1", "h99"], "Mammal tom"), S2], "A"),
     UNVERIFIED),
    ("goal-not-reached", "pqa-true", completion([S1], "A"), UNVERIFIED),
    ("no-deps-not-tautology", "pqa-true", completion([step("s1", [], "Mammal tom"), S2], "A"), UNVERIFIED),
    ("false-not-reached", "pqa-false", completion(GOLD_TRUE, "B"), UNVERIFIED),
    ("uncertain-with-bad-step", "pqa-unc", completion([step("s1", ["h5"], "Green tom")], "C"), UNVERIFIED),
    ("uncertain-but-provable", "pqa-mislabelled", completion(GOLD_TRUE, "C"), UNVERIFIED),
    ("uncertain-but-refutable", "pqa-neg-mislabelled", completion(GOLD_TRUE, "C"), UNVERIFIED),
    ("custom-ids-cites-missing-h", "pqa-custom-ids", completion(GOLD_TRUE, "A"), UNVERIFIED),
    ("rule-goal-instance-only", "pqa-rule", completion(GOLD_TRUE, "A"), UNVERIFIED),
    ("kk2-literal-missing", "kk2", completion(KK2_GOLD[:1], KK2_ANSWER), UNVERIFIED),
    ("kk3-over-citation", "kk3",
     completion(KK3_GOLD[:2] + [step("s3", ["h1", "h2", "h3", "s1", "s2"], "¬ Knight alice")], KK3_ANSWER),
     UNVERIFIED),
    ("explosion", "pqa-true", completion([step("s1", ["h3"], "False"), step("s2", ["s1"], "Animal tom")], "A"),
     UNVERIFIED),
    ("arity-clash-step", "pqa-true", completion(GOLD_TRUE + [step("s3", ["s2"], "Animal tom rex")], "A"),
     UNVERIFIED),
    ("kk2-conjunction-not-literal", "kk2",
     completion([KK2_GOLD[0], step("s2", ["h1", "s1"], "Knight zoey ∧ ¬ Knight oliver")], KK2_ANSWER), UNVERIFIED),
    ("kk3-wrong-step", "kk3",
     completion([step("s1", ["h1"], "Knight bob")] + KK3_GOLD[1:], KK3_ANSWER), UNVERIFIED),
    # -- wrong answer (well-formed)
    ("wrong-answer-false", "pqa-true", completion(GOLD_TRUE, "B"), WRONG),
    ("shuffled-letter-a", "pqa-shuffled", completion(GOLD_TRUE, "A"), WRONG),  # A means Uncertain here
    ("shuffled-letter-c", "pqa-shuffled", completion(GOLD_TRUE, "C"), WRONG),
    ("custom-ids-cites-h", "pqa-custom-ids", completion(GOLD_TRUE, "B"), WRONG),
    ("uncertain-claimed-provable", "pqa-true", completion(GOLD_TRUE, "C"), WRONG),
    ("true-claimed-false-goal", "pqa-false", completion(GOLD_FALSE, "A"), WRONG),
    ("kk2-wrong-answer", "kk2", completion(KK2_GOLD, "(1) Zoey is a knave (2) Oliver is a knight"), WRONG),
    ("kk3-wrong-answer", "kk3",
     completion(KK3_GOLD, "(1) Alice is a knight (2) Bob is a knight (3) Carol is a knave"), WRONG),
    # -- format failures and tag-stuffing
    ("no-tags", "pqa-true", "Tom is a cat, so an animal. The answer is A.", FORMAT),
    ("bad-json", "pqa-true", completion('[{"id": "s1", "dependencies": ["h1", "h3"], "conclusion": ', "A"),
     FORMAT),
    ("two-answers", "pqa-true", GOLD_TEXT + "\n<answer>A</answer>", FORMAT),
    ("two-answers-inside", "pqa-true", completion(GOLD_TRUE, "A</answer><answer>A"), FORMAT),
    ("text-after-answer", "pqa-true", GOLD_TEXT + "\nActually, I am not sure.", FORMAT),
    ("two-steps-blocks", "pqa-true",
     "<think>t</think>\n<steps>" + json.dumps(GOLD_TRUE) + "</steps>\n<steps>[]</steps>\n<answer>A</answer>",
     FORMAT),
    ("answer-without-steps", "pqa-true", "<think>Tom is an animal.</think>\n<answer>A</answer>", FORMAT),
    ("steps-not-array", "pqa-true", completion(json.dumps(S1), "A"), FORMAT),
    ("step-missing-conclusion", "pqa-true",
     completion([{"id": "s1", "dependencies": ["h1", "h3"], "rule": "mp"}, S2], "A"), FORMAT),
    ("no-think", "pqa-true", "<steps>" + json.dumps(GOLD_TRUE) + "</steps>\n<answer>A</answer>", FORMAT),
    ("two-thinks", "pqa-true", "<think>a</think>\n" + GOLD_TEXT, FORMAT),
    ("too-long", "pqa-true", completion(GOLD_TRUE, "A", think="x" * 40_000), FORMAT),
    ("answer-before-steps", "pqa-true",
     "<think>t</think>\n<answer>A</answer>\n<steps>" + json.dumps(GOLD_TRUE) + "</steps>", FORMAT),
    ("step-missing-dependencies", "pqa-true",
     completion([{"id": "s1", "conclusion": "Mammal tom", "rule": "mp"}, S2], "A"), FORMAT),
    ("steps-not-objects", "pqa-true", completion('["s1", 1]', "A"), FORMAT),
    ("step-deps-not-list", "pqa-true",
     completion([{"id": "s1", "dependencies": "h1", "conclusion": "Mammal tom", "rule": "mp"}, S2], "A"),
     FORMAT),
]

# Not pinned to one level by the issue, but never the top level and never above 0.3.
AT_MOST = [
    ("empty-answer", "pqa-true", completion(GOLD_TRUE, ""), WRONG),
    ("blank-answer", "pqa-true", completion(GOLD_TRUE, "   "), WRONG),
    ("not-an-option", "pqa-true", completion(GOLD_TRUE, "D"), WRONG),
    ("kk2-partial-answer", "kk2", completion(KK2_GOLD, "(1) Zoey is a knight"), WRONG),
    ("kk2-unknown-name", "kk2", completion(KK2_GOLD, "(1) Zoey is a knight (2) Bob is a knave"), WRONG),
    ("step-shadows-premise", "pqa-true",
     completion([step("h1", ["h1", "h3"], "Mammal tom"), step("s2", ["h2", "h1"], "Animal tom")], "A"),
     UNVERIFIED),
    ("duplicate-step-id", "pqa-true",
     completion([S1, step("s1", ["h2", "s1"], "Animal tom")], "A"), UNVERIFIED),
    ("unparsable-conclusion", "pqa-true",
     completion([S1, step("s2", ["h2", "s1"], "Animal tom) (assert false")], "A"), UNVERIFIED),
    ("injection-conclusion", "pqa-true", completion([S1, step("s2", ["h2", "s1"], "sorry")], "A"), UNVERIFIED),
    ("empty-steps-true", "pqa-true", completion([], "A"), UNVERIFIED),
    ("empty-conclusion", "pqa-true", completion([S1, step("s2", ["h2", "s1"], "")], "A"), UNVERIFIED),
    ("kk2-atom-twice", "kk2", completion(KK2_GOLD, KK2_ANSWER + " (3) Zoey is a knave"), WRONG),
    ("kk2-letter-answer", "kk2", completion(KK2_GOLD, "A"), WRONG),
    ("step-id-number", "pqa-true", completion([{**S1, "id": 1}, S2], "A"), UNVERIFIED),
]

ALL = CASES + AT_MOST


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(timeout_ms=2000, workers=2)) as v:
        yield v


@pytest.fixture(scope="module")
def scored(verifier):
    """Every case scored in one batch with the default configuration."""
    problems = [PROBLEMS[pid] for _, pid, _, _ in ALL]
    results = score_batch(problems, [text for _, _, text, _ in ALL], verifier)
    return {name: r for (name, _, _, _), r in zip(ALL, results)}


def test_levels_are_the_issue_defaults():
    cfg = RewardConfig()
    assert (cfg.format_failure, cfg.wrong_answer, cfg.right_unverified, cfg.right_verified) == (
        FORMAT, WRONG, UNVERIFIED, TOP)


@pytest.mark.parametrize("name,pid,text,expected", CASES, ids=[c[0] for c in CASES])
def test_prosfi_reward_levels(scored, name, pid, text, expected):
    result = scored[name]
    assert result.reward == expected, (result.reason, [(s.id, s.verdict, s.reason)
                                                                      for s in result.steps])
    assert result.format_ok == (expected != FORMAT)
    if expected == TOP:
        assert result.answer_correct and result.chain_valid
    if expected in (WRONG,):
        assert not result.answer_correct


@pytest.mark.parametrize("name,pid,text,ceiling", AT_MOST, ids=[c[0] for c in AT_MOST])
def test_never_top_and_at_most(scored, name, pid, text, ceiling):
    result = scored[name]
    assert result.reward in (FORMAT, WRONG, UNVERIFIED), result
    assert result.reward <= ceiling, (result.reason, result.steps)


def test_step_verdicts_say_why(scored):
    """A rejected step carries a reason; the verified steps of a gold chain say so."""
    gold = scored["gold-false"]
    assert [s.id for s in gold.steps] == ["s1", "s2", "s3"]
    assert all(s.verdict == "valid" for s in gold.steps)
    for name in ("wrong-step", "over-citation", "tautology-no-deps", "restatement", "repeat",
                 "self-reference", "forward-reference", "unknown-reference"):
        bad = [s for s in scored[name].steps if s.verdict != "valid"]
        assert bad and all(s.reason for s in bad), (name, scored[name].steps)
    padding = scored["padding"]
    assert any(s.verdict != "valid" for s in padding.steps[64:]) or len(padding.steps) <= 64


def test_max_steps_and_max_dependencies_are_configurable(verifier):
    problems = [PROBLEMS["pqa-false"]] * 2
    texts = [completion(GOLD_FALSE, "B"),
             completion([step("s1", ["h1", "h2", "h3"], "Animal tom"), step("s2", ["h4", "s1"], "¬ Plant tom")], "B")]
    tight = score_batch(problems, texts, verifier, chain_config=ChainConfig(max_steps=2, max_dependencies=2))
    assert [r.reward for r in tight] == [UNVERIFIED, UNVERIFIED]
    loose = score_batch(problems, texts, verifier, chain_config=ChainConfig(max_dependencies=3, max_rules=2))
    assert [r.reward for r in loose] == [TOP, TOP]


def test_custom_levels_keep_the_order(verifier):
    cfg = RewardConfig(format_failure=-1.0, wrong_answer=0.0, right_unverified=0.5, right_verified=2.0)
    names = ["no-tags", "wrong-answer-false", "wrong-step", "gold-true"]
    by_name = {c[0]: c for c in CASES}
    results = score_batch([PROBLEMS[by_name[n][1]] for n in names], [by_name[n][2] for n in names], verifier,
                          reward_config=cfg)
    assert [r.reward for r in results] == [-1.0, 0.0, 0.5, 2.0]


def test_outcome_and_step_fraction_modes(verifier):
    names = ["gold-true", "wrong-step", "wrong-extra-step", "wrong-answer-false", "no-tags"]
    by_name = {c[0]: c for c in CASES}
    problems = [PROBLEMS[by_name[n][1]] for n in names]
    texts = [by_name[n][2] for n in names]
    outcome = [r.reward for r in score_batch(problems, texts, verifier, RewardConfig(mode="outcome"))]
    assert outcome[:3] == [TOP, TOP, TOP]  # steps are ignored
    assert outcome[3] == WRONG and outcome[4] == FORMAT
    frac = [r.reward for r in score_batch(problems, texts, verifier, RewardConfig(mode="step_fraction"))]
    assert frac[0] == pytest.approx(TOP)
    assert frac[0] > frac[2] > frac[1] >= 0.0  # 2 of 3 verified beats 0 of 1
    assert frac[3] <= WRONG and frac[4] == FORMAT


# --------------------------------------------------------------------- TRL reward callables


def _rows(names):
    by_name = {c[0]: c for c in ALL}
    problems = [json.dumps(PROBLEMS[by_name[n][1]].to_dict(), ensure_ascii=False) for n in names]
    texts = [by_name[n][2] for n in names]
    expected = [by_name[n][3] for n in names]
    return problems, texts, expected


TRL_NAMES = ["gold-true", "gold-kk2", "wrong-step", "wrong-answer-false", "no-tags", "two-answers"]


def test_trl_plain_and_conversational(verifier, tmp_path):
    problems, texts, expected = _rows(TRL_NAMES)
    audit = tmp_path / "audit.jsonl"
    (reward,) = make_reward_funcs("prosfi", verifier=verifier, audit_path=str(audit))
    assert reward.__name__ == "prosfi_reward"
    metrics, extras = {}, {}
    plain = reward(prompts=["q"] * len(texts), completions=texts, problem=problems,
                   log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
                   log_extra=lambda column, values: extras.setdefault(column, []).extend(values))
    assert plain == pytest.approx(expected)
    # TRL's metric contract: scalar per batch, finite
    assert metrics and all(len(v) == 1 and not math.isnan(v[0]) for v in metrics.values())
    rates = {k.split("/")[-1]: v[0] for k, v in metrics.items()}
    assert rates["format_rate"] == pytest.approx(4 / 6)
    assert rates["answer_accuracy"] == pytest.approx(3 / 6)
    assert rates["chain_valid_rate"] == pytest.approx(2 / 6)
    assert {"verified_step_fraction", "unknown_fraction", "mean_steps", "verify_ms", "cache_hit_rate"} <= set(rates)
    assert extras and all(len(v) == len(texts) for v in extras.values())

    conv = reward(prompts=[[{"role": "user", "content": "q"}]] * len(texts),
                  completions=[[{"role": "assistant", "content": t}] for t in texts], problem=problems)
    assert conv == plain  # also works without log_metric/log_extra

    records = list(read_audit(audit))
    assert len(records) == 2 * len(texts)
    assert [r["problem_id"] for r in records[:len(texts)]] == [json.loads(p)["id"] for p in problems]
    assert [r["reward"] for r in records[:len(texts)]] == pytest.approx(expected)


def test_trl_async_variant_matches(verifier):
    problems, texts, expected = _rows(TRL_NAMES)
    (areward,) = make_reward_funcs("prosfi", verifier=verifier, asynchronous=True)
    metrics = {}

    async def run():
        return await areward(prompts=["q"] * len(texts), completions=texts, problem=problems,
                             log_metric=lambda n, v: metrics.setdefault(n, []).append(v),
                             log_extra=lambda c, v: None)

    assert asyncio.run(run()) == pytest.approx(expected)
    assert metrics


def test_trl_outcome_and_format_modes_need_no_verifier():
    problems, texts, _ = _rows(["wrong-step", "no-tags"])
    (outcome,) = make_reward_funcs("outcome")
    assert outcome(prompts=["q", "q"], completions=texts, problem=problems) == [TOP, FORMAT]
    (fmt,) = make_reward_funcs("format")
    assert fmt(prompts=["q", "q"], completions=texts, problem=[json.loads(p) for p in problems]) == [
        RewardConfig().format_ok, FORMAT]


# --------------------------------------------------------------------- `prosfi score`


def test_prosfi_score_cli(tmp_path, scored):
    problems_path = tmp_path / "problems.jsonl"
    problems_path.write_text("".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n"
                                     for p in PROBLEMS.values()), encoding="utf-8")
    lines = [json.dumps({"problem_id": pid, "completion": text}, ensure_ascii=False) for _, pid, text, _ in ALL]
    lines.append(json.dumps({"problem_id": "no-such-problem", "completion": GOLD_TEXT}))
    lines.append(json.dumps({"problem_id": "pqa-true", "completion": 5}))
    lines.append(json.dumps({"problem_id": "pqa-true"}))
    completions_path = tmp_path / "completions.jsonl"
    completions_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_path = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-m", "prosfi", "score", str(problems_path), str(completions_path),
                           "-o", str(out_path), "--workers", "1", "--batch-size", "7",
                           "--audit", str(tmp_path / "audit.jsonl")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert len(out) == len(lines)
    for (name, pid, _, _), record in zip(ALL, out):
        assert record["problem_id"] == pid
        assert set(record) >= {"problem_id", "reward", "format_ok", "answer_correct", "chain_valid", "steps",
                               "reason"}
        assert record["reward"] == pytest.approx(scored[name].reward), (name, record)
    unknown = out[len(ALL)]
    assert unknown["problem_id"] == "no-such-problem" and unknown["reason"]
    assert unknown["reward"] in (None, FORMAT)
    for record in out[len(ALL) + 1:]:
        assert record["reason"] and record["reward"] in (None, FORMAT)
    audited = list(read_audit(tmp_path / "audit.jsonl"))
    assert len(audited) >= len(ALL)
    assert [r["reward"] for r in audited[:len(ALL)]] == pytest.approx([scored[n].reward for n, *_ in ALL])


def test_prosfi_score_cli_padding_flag(tmp_path):
    problems_path = tmp_path / "problems.jsonl"
    problems_path.write_text(json.dumps(PROBLEMS["pqa-false"].to_dict(), ensure_ascii=False) + "\n",
                             encoding="utf-8")
    completions_path = tmp_path / "completions.jsonl"
    completions_path.write_text(json.dumps({"problem_id": "pqa-false", "completion": completion(GOLD_FALSE, "B")},
                                           ensure_ascii=False) + "\n", encoding="utf-8")
    rewards = []
    for max_steps in ("3", "2"):
        proc = subprocess.run([sys.executable, "-m", "prosfi", "score", str(problems_path), str(completions_path),
                               "--max-steps", max_steps, "--workers", "1"],
                              capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rewards.append(json.loads(proc.stdout.splitlines()[0])["reward"])
    assert rewards == [TOP, UNVERIFIED]


def test_audit_log_survives_a_torn_last_line(verifier, tmp_path):
    """A run killed mid-write leaves a partial line; every complete record is still readable."""
    from prosfi.rewards import AuditLog

    path = tmp_path / "run" / "audit.jsonl"
    path.parent.mkdir()
    problems, texts, expected = _rows(["gold-true", "wrong-step"])
    results = score_batch([Problem.from_dict(json.loads(p)) for p in problems], texts, verifier)
    log = AuditLog(path)
    assert log.write(results, texts, step=3) == 2
    log.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"problem_id": "pqa-true", "rew')
    records = list(read_audit(path))
    assert [r["reward"] for r in records] == pytest.approx(expected)
    assert all(r["problem_id"] == "pqa-true" for r in records)
    hash_key = next(k for k in records[0] if "hash" in k or "sha" in k)  # the completion hash
    assert records[0][hash_key] != records[1][hash_key]
    assert all(len(r["steps"]) == n for r, n in zip(records, (2, 1)))


HARD = ["∀ x, ¬ R x x", "∀ x y z, R x y → R y z → R x z", "∀ x, ∃ y, R x y"]  # infinite models only
# the undecidable step below applies three rules and names `Dog`: these tests are about time limits
HARD_CHAIN = ChainConfig(max_rules=0, reject_fresh_symbols=False)


def _hard_problem(pid, goal, answer):
    premises = [Premise(f"h{i + 1}", f) for i, f in enumerate(HARD)]
    premises += [Premise("h4", "Cat tom"), Premise("h5", "∀ x, Cat x → Mammal x")]
    return Problem(id=pid, kind="true_false_uncertain", premises=premises, goal=goal, options=dict(OPTIONS),
                   answer=answer)


def test_unknown_steps_and_unprovable_uncertain_are_not_verified(tmp_path):
    """A step the provers cannot decide in time is not verified; an Uncertain claim needs actual
    countermodels both ways, and here none is finite."""
    problems = [json.dumps(p.to_dict(), ensure_ascii=False) for p in (
        _hard_problem("hard-true", "Mammal tom", "A"), _hard_problem("hard-unc", "Dog a", "C"),
        _hard_problem("hard-true", "Mammal tom", "A"))]
    texts = [
        completion([step("s1", ["h1", "h2", "h3"], "Dog a"), step("s2", ["h4", "h5"], "Mammal tom")], "A"),
        completion([step("s1", ["h4", "h5"], "Mammal tom")], "C"),
        completion([step("s1", ["h4", "h5"], "Mammal tom")], "A"),
    ]
    metrics = {}
    with Verifier(VerifierConfig(timeout_ms=300, hard_timeout_ms=1500, workers=1)) as v:
        (reward,) = make_reward_funcs("prosfi", verifier=v, chain_config=HARD_CHAIN)
        rewards = reward(prompts=["q"] * 3, completions=texts, problem=problems,
                         log_metric=lambda n, x: metrics.setdefault(n.split("/")[-1], x))
    assert rewards == [UNVERIFIED, UNVERIFIED, TOP]
    assert metrics["unknown_fraction"] > 0


def test_grpo_group_duplicates_score_identically(verifier):
    """A GRPO group repeats completions; repeats (served from the cache) score the same."""
    by_name = {c[0]: c for c in CASES}
    names = ["gold-true", "wrong-step", "repeat", "two-answers"] * 6
    results = score_batch([PROBLEMS[by_name[n][1]] for n in names], [by_name[n][2] for n in names], verifier)
    assert [r.reward for r in results] == [by_name[n][3] for n in names]


def test_trl_dict_columns_and_empty_batch(verifier):
    problems, texts, expected = _rows(TRL_NAMES)
    (reward,) = make_reward_funcs("prosfi", verifier=verifier)
    assert reward(prompts=["q"] * len(texts), completions=texts,
                  problem=[json.loads(p) for p in problems]) == pytest.approx(expected)
    keys = []
    for batch in (slice(0, 2), slice(0, 0)):
        logged = {}
        out = reward(prompts=["q"] * len(texts[batch]), completions=texts[batch], problem=problems[batch],
                     log_metric=logged.__setitem__, log_extra=lambda c, v: None)
        assert len(out) == len(texts[batch])
        assert not any(math.isnan(v) for v in logged.values())
        keys.append(sorted(logged))
    assert keys[0] == keys[1]  # TRL gathers the same key set on every call


def test_trl_async_does_not_block_the_event_loop(tmp_path):
    problems = [json.dumps(_hard_problem("hard-true", "Mammal tom", "A").to_dict(), ensure_ascii=False)] * 2
    texts = [completion([step("s1", ["h1", "h2", "h3"], "Dog a"), step("s2", ["h4", "h5"], "Mammal tom")], "A"),
             completion([step("s1", ["h1", "h2", "h3"], "Dog b"), step("s2", ["h4", "h5"], "Mammal tom")], "A")]
    with Verifier(VerifierConfig(timeout_ms=400, hard_timeout_ms=1500, workers=1)) as v:
        (areward,) = make_reward_funcs("prosfi", verifier=v, asynchronous=True, chain_config=HARD_CHAIN)

        async def main():
            ticks = 0
            task = asyncio.ensure_future(areward(prompts=["q", "q"], completions=texts, problem=problems))
            while not task.done():
                ticks += 1
                await asyncio.sleep(0.01)
            return await task, ticks

        rewards, ticks = asyncio.run(main())
    assert rewards == [UNVERIFIED, UNVERIFIED]
    assert ticks >= 5  # the loop kept running while two checks waited for their time limit


def test_worker_killed_during_scoring_the_batch_still_scores():
    """Z3's own limit is far away: the pool kills the stuck worker; every completion still gets
    its reward and the killed step counts as not verified."""
    problems = [_hard_problem("hard-true", "Mammal tom", "A"), PROBLEMS["pqa-true"], PROBLEMS["kk2"]]
    texts = [completion([step("s1", ["h1", "h2", "h3"], "Dog a"), step("s2", ["h4", "h5"], "Mammal tom")], "A"),
             GOLD_TEXT, completion(KK2_GOLD, KK2_ANSWER)]
    with Verifier(VerifierConfig(timeout_ms=60_000, hard_timeout_ms=700, backends=("z3",), workers=1)) as v:
        results = score_batch(problems, texts, v, chain_config=HARD_CHAIN)
    assert [r.reward for r in results] == [UNVERIFIED, TOP, TOP]
    assert results[0].steps[0].verdict == "unknown" and results[0].steps[1].verdict == "valid"


def test_audit_path_per_rank(verifier, tmp_path):
    problems, texts, expected = _rows(TRL_NAMES[:3])
    (reward,) = make_reward_funcs("prosfi", verifier=verifier, audit_path=str(tmp_path / "audit-{rank}.jsonl"))
    assert reward(prompts=["q"] * 3, completions=texts, problem=problems) == pytest.approx(expected)
    files = list(tmp_path.glob("audit-*.jsonl"))
    assert len(files) == 1 and "{rank}" not in files[0].name
    assert [r["reward"] for r in read_audit(files[0])] == pytest.approx(expected)
