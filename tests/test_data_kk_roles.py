"""Issue 21, item 8b: Knights & Knaves in the puzzle's own words (saints/sinners, heroes/villains, …).

reasoning-gym's `knights_knaves` is a `--data` source (`rgkk:2..7`); premise texts, question and the
prompt's answer format use the puzzle's terms; answers written in them (knight/knave still accepted)
earn the top reward with a verified chain.
"""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("reasoning_gym")

from prosfi.data import kk  # noqa: E402
from prosfi.data.gold import gold_completion, gold_steps  # noqa: E402
from prosfi.data.prompts import user_prompt  # noqa: E402
from prosfi.eval.sources import load_source  # noqa: E402
from prosfi.rewards import score_batch  # noqa: E402
from prosfi.verify.config import VerifierConfig  # noqa: E402
from prosfi.verify.verifier import Verifier  # noqa: E402


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=3000)) as v:
        yield v


@pytest.fixture(scope="module")
def puzzles():
    return load_source("rgkk:2..7", count=10).problems


def _with_answer(problem, answer: str) -> str:
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in gold_steps(problem))
    return f"<think>\nx\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer}</answer>"


def test_sixty_reasoning_gym_puzzles_load_in_their_own_words(puzzles):
    assert len(puzzles) == 60 and {p.difficulty for p in puzzles} == set(range(2, 8))
    assert len({p.id for p in puzzles}) == 60
    others = [p for p in puzzles if p.extra.get("roles", {}).get("knight", "knight") != "knight"]
    assert len(others) > 30  # reasoning-gym picks the knight/knave pair at random among seven
    for p in others:
        good, bad = p.extra["roles"]["knight"], p.extra["roles"]["knave"]
        texts = " ".join(x.text for x in p.premises) + " " + p.question
        assert not re.search(r"\bknights?\b|\bknaves?\b", texts, re.IGNORECASE), (p.id, texts)
        assert good in p.question and bad in p.question
        prompt = user_prompt(p)
        assert f"is a {good}/{bad}" in prompt or f"is an {good}/{bad}" in prompt, prompt


def test_gold_and_own_word_answers_earn_the_top_reward(puzzles, verifier):
    golds = [gold_completion(p) for p in puzzles]
    assert all(golds)
    own = [_with_answer(p, p.extra["answer_text"]) for p in puzzles]  # "Chloe is a saint, and Sophia is a saint."
    plain = [_with_answer(p, " ".join(f"({i + 1}) {n} is a {'knight' if p.assignment[a] else 'knave'}"
                                      for i, (n, a) in enumerate(zip(p.extra["names"], p.atoms))))
             for p in puzzles]
    for texts in (golds, own, plain):
        results = score_batch(puzzles * 1, texts, verifier)
        bad = [(p.id, r.reason) for p, r in zip(puzzles, results) if not (r.reward == 1.0 and r.chain_valid)]
        assert bad == []


def test_a_wrong_role_in_own_words_is_a_wrong_answer(puzzles, verifier):
    p = next(x for x in puzzles if x.extra.get("roles", {}).get("knight") not in (None, "knight"))
    good, bad = p.extra["roles"]["knight"], p.extra["roles"]["knave"]
    names = p.extra["names"]
    flipped = ", ".join(f"{n} is a {bad if p.assignment[a] else good}" for n, a in zip(names, p.atoms))
    [r] = score_batch([p], [_with_answer(p, flipped)], verifier)
    assert not r.answer_correct and r.reward == 0.1


def test_hub_format_records_with_terms_keep_them():
    import reasoning_gym

    entry = next(e for e in reasoning_gym.create_dataset("knights_knaves", size=20, seed=11, n_people=3)
                 if e["metadata"]["knight_knave_terms"]["knight"] != "knight")
    md = entry["metadata"]
    rec = {"quiz": entry["question"], "names": md["names"], "statements": repr(_tuple(md["statements"])),
           "solution": md["solution"], "knight_knave_terms": md["knight_knave_terms"]}
    p = kk.problem_from_kk_record(rec, "kkhub-3-0000")
    assert p.extra["roles"]["knight"] == md["knight_knave_terms"]["knight"]
    assert not re.search(r"\bknights?\b|\bknaves?\b", " ".join(x.text for x in p.premises), re.IGNORECASE)
    assert p.question.startswith("Who is " + md["knight_knave_terms"]["a_knight"])


def _tuple(s):
    return tuple(_tuple(x) for x in s) if isinstance(s, (list, tuple)) else s
