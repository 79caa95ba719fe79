"""The direct-Lean baseline reward: statements, layout, reward levels, audit, and the Lean gate.

The reward's REPL pool points at tests/standin_repl.py (not Lean): it answers "ok" unless the
command carries a marker (`standin_error`, `standin_hang`, `standin_nonstd` for a non-standard
axiom in `#print axioms`). So these tests check the plumbing from completion to reward level,
never whether a proof is correct. The `lean`-marked test runs real proofs where `lake` exists.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from prosfi.data.problem import Problem
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.direct_lean import (
    DirectLeanReward,
    direct_lean_prompt,
    direct_lean_reward_funcs,
    extract_direct,
    problem_statement,
)
from prosfi.verify.lean.config import LeanConfig

STANDIN = str(Path(__file__).with_name("standin_repl.py").resolve())

TFU = Problem.from_dict({
    "id": "pqa-1", "kind": "true_false_uncertain", "source": "test",
    "premises": [{"id": "h1", "formal": "∀ x, Kind x → Nice x"}, {"id": "h2", "formal": "Kind candy"}],
    "goal": "Nice candy", "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "A",
})
FALSE_ = Problem.from_dict({**TFU.to_dict(), "id": "pqa-2", "premises": [
    {"id": "h1", "formal": "∀ x, Kind x → ¬ Nice x"}, {"id": "h2", "formal": "Kind candy"}], "answer": "B"})
UNCERTAIN = Problem.from_dict({**TFU.to_dict(), "id": "pqa-3", "premises": [
    {"id": "h1", "formal": "∀ x, Kind x → Nice x"}], "answer": "C"})
KK = Problem.from_dict({
    "id": "kk-1", "kind": "assignment", "source": "test",
    "premises": [{"id": "h1", "formal": "Knight zoey ↔ ¬ Knight oliver"}, {"id": "h2", "formal": "Knight oliver"}],
    "atoms": ["Knight zoey", "Knight oliver"], "assignment": {"Knight zoey": False, "Knight oliver": True},
})


def completion(answer: str, lean: str | None = None) -> str:
    text = f"<think>reasoning</think>\n<answer>{answer}</answer>"
    return text + (f"\n<lean>\n{lean}\n</lean>" if lean is not None else "")


@pytest.fixture
def reward(tmp_path):
    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=2, timeout_s=1.0)
    r = DirectLeanReward(RewardConfig(mode="direct_lean"), config, audit_path=str(tmp_path / "audit-{rank}.jsonl"))
    yield r
    r.close()


def _score(reward, problems, completions, **kw):
    return reward(prompts=[""] * len(completions), completions=completions,
                  problem=[json.dumps(p.to_dict()) for p in problems], **kw)


def test_statements_state_the_gold_claim():
    assert problem_statement(TFU).text.endswith(":\n    Nice candy")
    assert problem_statement(FALSE_).text.endswith(":\n    ¬Nice candy")
    assert problem_statement(TFU, "False").text.endswith(":\n    ¬Nice candy")
    assert problem_statement(UNCERTAIN) is None
    kk = problem_statement(KK)
    assert kk.text.endswith(":\n    ¬Knight zoey ∧ Knight oliver")
    assert "(h1 : Knight zoey ↔ ¬Knight oliver)" in kk.text and kk.name == "prosfi_direct"


def test_prompt_shows_the_hypotheses_but_not_the_gold_claim():
    tfu = direct_lean_prompt(TFU)
    assert "(h1 : ∀ (x : U), Kind x → Nice x) (h2 : Kind candy) :\n    CLAIM := by" in tfu
    assert "`Nice candy` if you answer True, `¬Nice candy` if you answer False" in tfu
    kk = direct_lean_prompt(KK)
    assert "`Knight zoey ∧ Knight oliver`" in kk and "¬Knight zoey" not in kk  # gold values stay hidden


def test_layout_is_strict_about_tags():
    assert extract_direct(completion("A", "simp")).lean == "simp"
    assert extract_direct(completion("A", "```lean\nby simp\n```")).lean.strip() == "simp"
    assert extract_direct(completion("A")).lean is None
    assert extract_direct("<answer>A</answer>").reason  # no </think>
    assert extract_direct(completion("A") + "<answer>B</answer>").reason
    assert extract_direct(completion("A", "simp") + " trailing text").reason
    assert extract_direct("<think>x</think><lean>simp</lean><answer>A</answer>").answer == "A"


def test_reward_levels_with_the_standin(reward):
    cases = [
        (TFU, completion("A", "exact h1 candy h2"), 1.0),                 # stand-in ok + standard axioms
        (TFU, [{"role": "assistant", "content": completion("True", "exact h1 _ h2")}], 1.0),
        (TFU, completion("A", "exact standin_error"), 0.3),               # Lean error → right, unverified
        (TFU, completion("A", "exact standin_nonstd"), 0.3),              # non-standard axiom reported
        (TFU, completion("A", "exact standin_hang"), 0.3),                # timeout → killed, unverified
        (TFU, completion("A"), 0.3),                                      # no proof
        (TFU, completion("B", "exact h1 candy h2"), 0.1),                 # wrong answer
        (TFU, completion("D", "simp"), 0.1),                              # unreadable answer
        (TFU, completion("A", "sorry"), 0.0),                             # refused by the sanitiser
        (TFU, completion("A", "set_option maxHeartbeats 0 in\nsimp"), 0.0),
        (TFU, "no tags at all", 0.0),
        (UNCERTAIN, completion("C", "simp"), 0.3),                        # Lean cannot prove Uncertain
        (UNCERTAIN, completion("C", "sorry"), 0.0),                       # refused whatever the answer
        (TFU, completion("B", "#eval 1"), 0.0),
        (FALSE_, completion("B", "exact h1 candy h2"), 1.0),
        (KK, completion("(1) Zoey is a knave (2) Oliver is a knight", "simp_all"), 1.0),
        (KK, completion("(1) Zoey is a knight (2) Oliver is a knight", "simp_all"), 0.1),
    ]
    metrics: dict[str, float] = {}
    rewards = _score(reward, [c[0] for c in cases], [c[1] for c in cases],
                     log_metric=lambda k, v: metrics.__setitem__(k, v))
    assert rewards == [c[2] for c in cases]
    assert metrics["direct_lean/verified"] == pytest.approx(4 / len(cases))
    assert metrics["direct_lean/format_ok"] == pytest.approx(12 / len(cases))
    audit = reward.audit.path.read_text().splitlines()
    assert reward.audit.path.name == "audit-0.jsonl" and len(audit) == len(cases)
    records = [json.loads(line) for line in audit]
    assert records[0]["lean_verified"] and records[0]["problem_id"] == "pqa-1"
    assert "proof refused" in records[8]["reason"] and "timeout" in records[4]["reason"]
    assert "axioms" in records[3]["reason"]


def test_the_pool_survives_a_timeout_between_batches(reward):
    first = _score(reward, [TFU], [completion("A", "exact standin_hang")])
    second = _score(reward, [TFU], [completion("A", "exact h1 candy h2")])
    assert first == [0.3] and second == [1.0]


def test_unreadable_problem_is_none_not_a_crash(reward):
    out = reward(prompts=[""], completions=[completion("A", "simp")], problem=["{not json"])
    assert out == [None]


def test_levels_come_from_the_reward_config(tmp_path):
    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=1)
    levels = RewardConfig(mode="direct_lean", wrong_answer=0.2, right_unverified=0.5, right_verified=0.9)
    r = DirectLeanReward(levels, config)
    try:
        assert _score(r, [TFU, TFU, TFU], [completion("B"), completion("A"), completion("A", "simp")]) == [
            0.2, 0.5, 0.9]
    finally:
        r.close()


@pytest.mark.skipif(shutil.which("lake") is not None, reason="checks the error shown where Lean is missing")
def test_missing_lean_fails_at_construction():
    with pytest.raises(RuntimeError, match="direct_lean.*lake"):
        direct_lean_reward_funcs(RewardConfig(mode="direct_lean"))


@pytest.mark.lean
def test_real_lean_direct_proofs():
    (r,) = direct_lean_reward_funcs(RewardConfig(mode="direct_lean"), LeanConfig(workers=2, timeout_s=120))
    try:
        rewards = _score(r, [TFU, TFU, FALSE_, KK], [
            completion("A", "exact h1 candy h2"),
            completion("A", "exact h2"),                       # type error → right, unverified
            completion("B", "intro hn\nexact h1 candy h2 hn"),
            completion("(1) Zoey is a knave (2) Oliver is a knight", "constructor\n· simp_all\n· exact h2"),
        ])
    finally:
        r.close()
    assert rewards == [1.0, 0.3, 1.0, 1.0]


def test_make_reward_funcs_dispatches_direct_lean_here():
    from prosfi.rewards.funcs import make_reward_funcs

    config = LeanConfig(repl_command=(sys.executable, STANDIN), workers=1)
    (r,) = make_reward_funcs("direct_lean", lean_config=config)
    try:
        assert isinstance(r, DirectLeanReward) and r.__name__ == "direct_lean_reward"
        assert _score(r, [TFU], [completion("A", "exact h1 candy h2")]) == [1.0]
    finally:
        r.close()


def test_direct_lean_training_rows_ask_for_a_lean_proof_not_steps():
    from prosfi.rewards.direct_lean import DIRECT_LEAN_SYSTEM_PROMPT
    from prosfi.train.rows import grpo_dataset

    rows = grpo_dataset([TFU, KK], reward_mode="direct_lean")
    for row, problem in zip(rows, (TFU, KK)):
        system, user = row["prompt"][0]["content"], row["prompt"][-1]["content"]
        assert system == DIRECT_LEAN_SYSTEM_PROMPT and "<lean>" in system and "<steps>" not in system
        assert user.endswith(direct_lean_prompt(problem))
        assert json.loads(row["problem"])["id"] == problem.id
    # a reply in the layout the prompt asks for is read as such
    assert extract_direct(completion("A", "exact h1 candy h2")).lean == "exact h1 candy h2"
    with pytest.raises(ValueError, match="few_shot"):
        grpo_dataset([TFU], few_shot=1, reward_mode="direct_lean")


def test_the_mode_selects_the_direct_lean_format_everywhere():
    """`reward_mode: direct_lean` is mapped to the format once; eval's prompts are the training rows' (worked
    examples dropped: the format has none), preflight names what is missing, serve and the callback skip it."""
    from prosfi.eval.generate import PromptSettings, build_prompts
    from prosfi.rewards.direct_lean import DirectLeanFormat
    from prosfi.rewards.formats import format_for
    from prosfi.train.rows import grpo_dataset

    fmt = format_for("direct_lean")
    assert isinstance(fmt, DirectLeanFormat) and fmt.name == "lean_proof"
    assert not (fmt.few_shot or fmt.gold_traces or fmt.served or fmt.eval_scored)
    rows = grpo_dataset([TFU, KK], reward_mode="direct_lean")
    assert build_prompts([TFU, KK], PromptSettings(few_shot=3, reward_mode="direct_lean")) == [r["prompt"] for r in rows]
    missing = fmt.unavailable(LeanConfig(project="/nonexistent-lean-project"))
    assert missing.startswith("needs Lean: ")
    assert fmt.unavailable(LeanConfig(repl_command=(sys.executable, STANDIN))) == ""
