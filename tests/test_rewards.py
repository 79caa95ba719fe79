"""Rewards: levels and modes, TRL reward functions (plain and conversational, sync and async),
log_metric / log_extra, audit records, never raising on a bad completion, a worker crash."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.data.problem import Problem
from prosfi.rewards import (
    REWARD_MODES,
    RewardConfig,
    make_reward_funcs,
    read_audit,
    score_batch,
    score_completion,
)
from prosfi.rewards.metrics import metric_names
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
ANIMALS = Problem.from_dict({
    "id": "animals", "kind": "true_false_uncertain", "goal": "Alive tom", "options": OPTIONS, "answer": "A",
    "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(
        ["∀ x, Cat x → Mammal x", "∀ x, Mammal x → Animal x", "Cat tom", "∀ x, Animal x → Alive x", "Dog rex"])]})
KK = Problem.from_dict({"id": "kk", "kind": "assignment", "premises": [
    {"id": "h1", "formal": "Knight zoey ↔ ¬ Knight oliver"},
    {"id": "h2", "formal": "Knight oliver ↔ (Knight zoey ∧ Knight oliver)"}],
    "atoms": ["Knight zoey", "Knight oliver"], "assignment": {"Knight zoey": True, "Knight oliver": False}})
GOOD = [("s1", ["h1", "h3"], "Mammal tom"), ("s2", ["h2", "s1"], "Animal tom"), ("s3", ["h4", "s2"], "Alive tom")]
KK_GOOD = [("s1", ["h2"], "Knight oliver → Knight zoey"), ("s2", ["h1", "s1"], "¬ Knight oliver"),
           ("s3", ["h1", "s2"], "Knight zoey")]
KK_ANSWER = "(1) Zoey is a knight (2) Oliver is a knave"


def completion(spec, answer="A", tail=""):
    steps = [{"id": i, "dependencies": d, "conclusion": c, "rule": "mp"} for i, d, c in spec]
    return f"<think>\nchain it\n</think>\n<steps>\n{json.dumps(steps, ensure_ascii=False)}\n</steps>\n" \
           f"<answer>{answer}</answer>{tail}"


# name -> (problem, completion, level it must get in mode prosfi)
CASES = {
    "verified": (ANIMALS, completion(GOOD), "right_verified"),
    "verified_kk": (KK, completion(KK_GOOD, KK_ANSWER), "right_verified"),
    "wrong_step": (ANIMALS, completion([GOOD[0], ("s2", ["h2", "s1"], "Animal tom ∧ Dog tom"), GOOD[2]]),
                   "right_unverified"),
    "over_citation": (ANIMALS, completion([("s1", ["h1", "h2", "h3", "h4", "h5"], "Alive tom")]), "right_unverified"),
    "tautology": (ANIMALS, completion(GOOD + [("s4", [], "Dog rex ∨ ¬ Dog rex")]), "right_unverified"),
    "restatement": (ANIMALS, completion([("s0", ["h3"], "Cat tom")] + GOOD), "right_unverified"),
    "padding": (ANIMALS, completion(GOOD + [("s4", ["h1", "h3"], "Mammal tom")]), "right_unverified"),
    "goal_missing": (ANIMALS, completion(GOOD[:2]), "right_unverified"),
    "kk_literal_missing": (KK, completion(KK_GOOD[:1], KK_ANSWER), "right_unverified"),
    "wrong_answer": (ANIMALS, completion(GOOD, "B"), "wrong_answer"),
    "unreadable_answer": (ANIMALS, completion(GOOD, "probably true"), "wrong_answer"),
    "kk_wrong": (KK, completion(KK_GOOD, "Zoey is a knave, Oliver is a knight"), "wrong_answer"),
    "two_answers": (ANIMALS, completion(GOOD, "A</answer><answer>B"), "format_failure"),
    "empty_answer": (ANIMALS, completion(GOOD, ""), "format_failure"),
    "answer_without_steps": (ANIMALS, "<think>easy</think><answer>A</answer>", "format_failure"),
    "text_after_answer": (ANIMALS, completion(GOOD, tail=" and also B"), "format_failure"),
    "steps_not_json": (ANIMALS, completion(GOOD).replace('"s1"', "s1"), "format_failure"),
    "garbage": (ANIMALS, "I don't know", "format_failure"),
}


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(workers=1, timeout_ms=2000)) as v:
        yield v


def test_levels_in_prosfi_mode(verifier):
    cfg = RewardConfig()
    names = list(CASES)
    results = score_batch([CASES[n][0] for n in names], [CASES[n][1] for n in names], verifier, cfg)
    for name, r in zip(names, results):
        assert r.reward == getattr(cfg, CASES[name][2]), (name, r.reason, [s.to_json() for s in r.steps])
        assert r.reason or CASES[name][2] == "right_verified", name
    by = dict(zip(names, results))
    assert by["verified"].chain_valid and by["verified"].format_ok and by["verified"].answer_correct
    assert not by["two_answers"].format_ok and "2 <answer>" in by["two_answers"].reason
    assert by["wrong_answer"].format_ok and not by["wrong_answer"].answer_correct


def test_custom_levels(verifier):
    cfg = RewardConfig(format_failure=-1.0, wrong_answer=0.0, right_unverified=0.5, right_verified=2.0)
    names = ["verified", "wrong_step", "wrong_answer", "garbage"]
    rewards = [r.reward for r in score_batch([CASES[n][0] for n in names], [CASES[n][1] for n in names],
                                             verifier, cfg)]
    assert rewards == [2.0, 0.5, 0.0, -1.0]


def test_reward_config_validation():
    with pytest.raises(ValueError, match="mode"):
        RewardConfig(mode="vibes")
    with pytest.raises(ValueError, match="wrong_answer"):
        RewardConfig(wrong_answer=0.5, right_unverified=0.3)


def test_outcome_mode_ignores_steps_and_needs_no_verifier():
    cfg = RewardConfig(mode="outcome")
    names = ["verified", "wrong_step", "over_citation", "wrong_answer", "two_answers"]
    rewards = [r.reward for r in score_batch([CASES[n][0] for n in names], [CASES[n][1] for n in names], None, cfg)]
    assert rewards == [1.0, 1.0, 1.0, 0.1, 0.0]


def test_format_mode():
    cfg = RewardConfig(mode="format")
    names = ["verified", "wrong_answer", "unreadable_answer", "empty_answer", "garbage"]
    rewards = [r.reward for r in score_batch([CASES[n][0] for n in names], [CASES[n][1] for n in names], None, cfg)]
    assert rewards == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_step_fraction_mode(verifier):
    cfg = RewardConfig(mode="step_fraction")
    names = ["verified", "wrong_step", "goal_missing", "wrong_answer"]
    r = score_batch([CASES[n][0] for n in names], [CASES[n][1] for n in names], verifier, cfg)
    assert r[0].reward == 1.0
    # s2 invalid, s3 built on it: one of three verified, and the goal is not reached by a verified step
    assert r[1].reward == pytest.approx(0.3 + 0.7 * 1 / 4)
    assert r[2].reward == pytest.approx(0.3 + 0.7 * 2 / 3)  # two verified, the goal step missing
    assert r[3].reward == 0.1


def test_prosfi_mode_needs_a_verifier():
    with pytest.raises(ValueError, match="verifier"):
        score_batch([ANIMALS], [CASES["verified"][1]], None, RewardConfig())
    with pytest.raises(ValueError, match="verifier"):
        make_reward_funcs("prosfi")


def test_score_completion_matches_batch(verifier):
    r = score_completion(ANIMALS, CASES["verified"][1], verifier)
    assert r.reward == 1.0 and [s.verdict for s in r.steps] == ["valid"] * 3
    assert r.to_json()["steps"][0] == {"id": "s1", "verdict": "valid", "reason": ""}


@pytest.mark.parametrize("bad", [None, 42, "x" * 40_000, "<think>\ud800</think>", [{"role": "assistant"}]])
def test_bad_completions_never_raise(verifier, bad):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    rewards = fn(prompts=["p"], completions=[bad], problem=[json.dumps(ANIMALS.to_dict())])
    assert rewards == [0.0]


def test_an_exception_while_reading_is_a_format_failure_with_a_warning(verifier, monkeypatch, caplog):
    from prosfi.domains.logic import LogicDomain

    def boom(self, problem, text):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(LogicDomain, "parse_answer", boom)  # the scorer reads answers through the Domain
    with caplog.at_level(logging.WARNING, logger="prosfi.rewards.score"):
        r = score_batch([ANIMALS, ANIMALS], [CASES["verified"][1], "nonsense"], verifier)
    assert r[0].reward == 0.0 and "parser bug" in r[0].reason
    assert r[1].reward == 0.0 and "missing" in r[1].reason
    assert any("parser bug" in rec.getMessage() for rec in caplog.records)


# ------------------------------------------------------------------ TRL calling conventions
def trl_kwargs(problems, metrics, extras, step=3):
    class State:
        global_step = step

    return {"problem": [json.dumps(p.to_dict()) for p in problems], "trainer_state": State(),
                "log_metric": lambda name, value: metrics.append((name, value)),
                "log_extra": lambda column, values: extras.append((column, values)),
                "completion_ids": [[1, 2]] * len(problems)}


def test_plain_and_conversational_inputs_score_alike(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    names = ["verified", "wrong_step", "wrong_answer", "garbage"]
    problems, texts = [CASES[n][0] for n in names], [CASES[n][1] for n in names]
    plain = fn(prompts=["q"] * 4, completions=texts, **trl_kwargs(problems, [], []))
    conv = fn(prompts=[[{"role": "user", "content": "q"}]] * 4,
              completions=[[{"role": "assistant", "content": t}] for t in texts],
              **trl_kwargs(problems, [], []))
    assert plain == conv == [1.0, 0.3, 0.1, 0.0]
    # the problem column may also hold dicts
    assert fn(completions=texts, problem=[p.to_dict() for p in problems]) == plain


def test_log_metric_and_log_extra(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    assert fn.__name__ == "prosfi_reward"
    names = ["verified", "wrong_step", "wrong_answer", "garbage"]
    metrics, extras = [], []
    fn(completions=[CASES[n][1] for n in names], **trl_kwargs([CASES[n][0] for n in names], metrics, extras))
    got = dict(metrics)
    assert set(got) == set(metric_names("prosfi")) and len(metrics) == len(got)
    assert got["prosfi/format_rate"] == 0.75
    assert got["prosfi/answer_accuracy"] == 0.5
    assert got["prosfi/chain_valid_rate"] == 0.25
    assert got["prosfi/mean_steps"] == 3.0
    assert got["prosfi/verified_step_fraction"] == pytest.approx(7 / 9)  # s3 of wrong_step builds on its s2
    assert got["prosfi/unknown_fraction"] == 0.0
    assert got["prosfi/verify_ms"] >= 0.0 and 0.0 <= got["prosfi/cache_hit_rate"] <= 1.0
    ((column, values),) = extras
    assert column == "verdicts" and len(values) == 4
    assert values[0].startswith("s1✓ s2✓ s3✓") and values[0].endswith("1.00")
    assert "s2✗(invalid)" in values[1] and values[3].startswith("format✗")
    # the same key set on every call, even for a batch of format failures only
    metrics2 = []
    fn(completions=["junk"], **trl_kwargs([ANIMALS], metrics2, []))
    assert [k for k, _ in metrics2] == [k for k, _ in metrics]
    assert dict(metrics2)["prosfi/format_rate"] == 0.0


def test_a_repeated_batch_hits_the_cache(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    texts = [CASES["verified_kk"][1]] * 2
    fn(completions=texts, **trl_kwargs([KK, KK], [], []))
    metrics = []
    fn(completions=texts, **trl_kwargs([KK, KK], metrics, []))
    assert dict(metrics)["prosfi/cache_hit_rate"] == 1.0


def test_outcome_function_logs_its_own_fixed_key_set():
    (fn,) = make_reward_funcs("outcome")
    metrics = []
    assert fn(completions=[CASES["wrong_step"][1]], **trl_kwargs([ANIMALS], metrics, [])) == [1.0]
    assert [k for k, _ in metrics] == list(metric_names("outcome"))
    assert fn.__name__ == "outcome_reward"


def test_works_without_trainer_services(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    assert fn(prompts=None, completions=[CASES["verified"][1]], problem=[json.dumps(ANIMALS.to_dict())]) == [1.0]


def test_missing_problem_column_is_a_clear_error(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    with pytest.raises(ValueError, match="'problem' column"):
        fn(prompts=["q"], completions=["x"])


def test_unreadable_problem_gives_none(verifier, caplog):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier)
    with caplog.at_level(logging.WARNING):
        assert fn(completions=[CASES["verified"][1]], problem=['{"id": "x"}']) == [None]


def test_async_variant(verifier):
    (fn,) = make_reward_funcs("prosfi", verifier=verifier, asynchronous=True)
    # what TRL's is_async_callable checks for a callable instance (importing trl here costs seconds)
    assert inspect.iscoroutinefunction(fn.__call__) and fn.__name__ == "prosfi_reward"
    names = ["verified", "wrong_step", "wrong_answer", "garbage"]
    metrics = []

    async def main():
        ticks = 0

        async def ticker():  # the loop keeps running while provers work
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.ensure_future(ticker())
        out = await fn(completions=[CASES[n][1] for n in names],
                       **trl_kwargs([CASES[n][0] for n in names], metrics, []))
        t.cancel()
        return out, ticks

    rewards, ticks = asyncio.run(main())
    assert rewards == [1.0, 0.3, 0.1, 0.0]
    assert ticks > 0 and len(metrics) == len(metric_names("prosfi"))


def test_direct_lean_is_imported_only_when_asked(verifier):
    # a fresh interpreter: other test modules import direct_lean themselves
    code = (
        "import sys\n"
        "from prosfi.rewards import REWARD_MODES, make_reward_funcs\n"
        "from prosfi.verify import Verifier, VerifierConfig\n"
        "v = Verifier(VerifierConfig(workers=0))\n"
        "for mode in REWARD_MODES:\n"
        "    make_reward_funcs(mode, verifier=v)\n"
        "print('prosfi.rewards.direct_lean' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
    for mode in REWARD_MODES:
        make_reward_funcs(mode, verifier=verifier)
    with pytest.raises(ValueError, match="unknown reward mode"):
        make_reward_funcs("nope", verifier=verifier)


def test_audit_records(verifier, tmp_path):
    path = tmp_path / "run" / "audit-{rank}.jsonl"
    (fn,) = make_reward_funcs("prosfi", verifier=verifier, audit_path=str(path))
    names = ["verified", "wrong_step", "garbage"]
    texts = [CASES[n][1] for n in names]
    fn(completions=texts, **trl_kwargs([CASES[n][0] for n in names], [], [], step=7))
    fn.close()
    records = list(read_audit(tmp_path / "run" / f"audit-{os.environ.get('RANK', '0')}.jsonl"))
    assert [r["reward"] for r in records] == [1.0, 0.3, 0.0]
    import hashlib

    assert records[0]["completion_sha256"] == hashlib.sha256(texts[0].encode()).hexdigest()
    # global_step 7 = seven optimizer steps done: this batch trains step 8, as metrics.jsonl numbers it
    assert records[0]["problem_id"] == "animals" and records[0]["mode"] == "prosfi" and records[0]["step"] == 8
    assert records[0]["completion"] == texts[0]
    assert [s["verdict"] for s in records[1]["steps"]] == ["valid", "invalid", "rejected"]
    assert records[2]["format_ok"] is False and records[2]["reason"]


# ------------------------------------------------------------------ a worker dies mid-batch
def test_worker_killed_while_scoring_still_gives_every_step_a_verdict():
    """`Hang` makes the fault-injection backend hang; we SIGKILL that worker while it is busy."""
    hanging = Problem.from_dict({**ANIMALS.to_dict(), "id": "hanging", "premises": [
        *ANIMALS.to_dict()["premises"], {"id": "h6", "formal": "∀ x, Alive x → Hang x"}]})
    problems = [hanging, hanging, KK]
    texts = [completion(GOOD + [("s4", ["h6", "s3"], "Hang tom")]), completion(GOOD), completion(KK_GOOD, KK_ANSWER)]
    # truth table off: it would prove `Hang tom` in-process, and the backend must see it
    with Verifier(VerifierConfig(backends=("prosfi.verify.testing:FaultBackend", "z3"), workers=1,
                                 timeout_ms=10_000, truth_table=False)) as v:
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("r", score_batch(problems, texts, v)))
        t.start()
        killed = None
        deadline = time.monotonic() + 20
        while killed is None and t.is_alive() and time.monotonic() < deadline:
            pool = v.pool
            if pool is not None and pool.busy_pids():
                time.sleep(0.3)  # let the quick checks go through; the hang keeps the worker busy
                busy = pool.busy_pids()
                if busy:
                    killed = busy[0]
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.02)
        t.join(60)
        assert killed is not None and not t.is_alive()
        hung, fine, kk = out["r"]
    assert [s.id for s in hung.steps] == ["s1", "s2", "s3", "s4"]
    assert [s.verdict for s in hung.steps] == ["valid", "valid", "valid", "unknown"]
    assert "died" in hung.steps[3].reason
    assert hung.reward == 0.3
    assert fine.reward == 1.0 and kk.reward == 1.0


FORMULA_PARTS = ["Cat tom", "Mammal tom", "Alive tom", "¬ Dog rex", "∀ x, Cat x → Alive x", "(", ")", "∧", "→",
                 "Cat", "tom", "sorry", "#eval", "∀ y,", "=", "True"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.fixed_dictionaries({
    "id": st.sampled_from(["s1", "s2", "s3", "h1", "x"]),
    "dependencies": st.lists(st.sampled_from(["h1", "h2", "h3", "h9", "s1", "s2", "s3"]), max_size=6),
    "conclusion": st.lists(st.sampled_from(FORMULA_PARTS), min_size=1, max_size=6).map(" ".join),
}), max_size=5), st.sampled_from(["A", "B", "C", "maybe"]))
def test_random_chains_never_raise_and_score_a_level(verifier, steps, answer):
    text = f"<think>t</think><steps>{json.dumps(steps, ensure_ascii=False)}</steps><answer>{answer}</answer>"
    (r,) = score_batch([ANIMALS], [text], verifier)
    cfg = RewardConfig()
    assert r.reward in (cfg.format_failure, cfg.wrong_answer, cfg.right_unverified, cfg.right_verified)
    assert r.format_ok or r.reason
    if r.reward == cfg.right_verified:  # only a sound, guarded chain to the goal gets the top level
        assert r.chain_valid and all(s.verdict == "valid" for s in r.steps)
        assert any("Alive tom" in s["conclusion"] for s in steps)


def test_audit_survives_a_torn_line_followed_by_a_resumed_run(tmp_path):
    from prosfi.rewards.audit import AuditLog, read_audit

    path = tmp_path / "audit.jsonl"
    path.write_text('{"problem_id": "p0", "reward": 1.0}\n{"problem_id": "p1", "rew')  # killed mid-write
    with AuditLog(path) as log:  # the resumed run appends
        log.append([{"problem_id": "p2", "reward": 0.3}])
    assert [r["problem_id"] for r in read_audit(path)] == ["p0", "p2"]
