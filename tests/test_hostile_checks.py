"""Hostile checks: nothing hangs the verifier (issue #10, part 1).

Every adversarial check (deep binders over two constants, alternating quantifiers, many
constants, wide disjunctions, huge but legal formulas) must come back within the documented
bound, `Verifier.response_bound_ms()` (the backends' hard limit + the truth table's budget +
RESPONSE_MARGIN_MS), on a started verifier, and never as a false `valid`. The truth table and
the gold-trace searches give up, rather than hang, when their budgets run out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prosfi.logic import check_signature, parse
from prosfi.verify import Entailment, Verifier, VerifierConfig, truth_table
from prosfi.verdict import Status

ROOT = Path(__file__).resolve().parents[1]


def binders(n: int, body: str = "P x0", q: str = "∀") -> str:
    return f"{q} " + " ".join(f"x{i}" for i in range(n)) + ", " + body


def balanced(items: list[str], op: str) -> str:
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return f"({balanced(items[:mid], op)}) {op} ({balanced(items[mid:], op)})"


# name -> (premises, conclusion, may it be valid?)
HOSTILE = {
    "40 binders over two constants (the issue's case)": ({"h1": "P a", "h2": "P b"}, binders(40), False),
    "40 binders, every variable used": (
        {"h1": "P a", "h2": "P b"}, binders(40, " ∨ ".join(f"P x{i}" for i in range(40))), True),
    "40 binders in a premise, ground conclusion": (
        {"h1": binders(40, " ∧ ".join(f"P x{i}" for i in range(40))), "h2": "P b"}, "P a", True),
    "60 alternating quantifiers": (
        {"h1": "R a b", "h2": "R b c"},
        "".join(f"{'∀' if i % 2 else '∃'} x{i}, " for i in range(60))
        + " ∧ ".join(f"R x{i} x{i + 1}" for i in range(59)), False),
    "16 nested ∀ over three constants": (
        {"h1": "R a b", "h2": "R b c", "h3": "R c a"},
        "".join(f"∀ x{i}, " for i in range(16)) + balanced([f"R x{i} x{i + 1}" for i in range(15)], "∨"),
        False),
    "700 constants": (
        {"h1": balanced([f"P c{i}" for i in range(700)], "∧")}, balanced([f"P c{i}" for i in range(700)], "∨"),
        True),
    "wide disjunction of 600 propositions": (
        {"h1": "A1"}, balanced([f"A{i}" for i in range(600)], "∨"), True),
    "huge legal biconditional tree": (
        {"h1": balanced([f"A{i % 14}" for i in range(900)], "↔")},
        balanced([f"A{i % 14}" for i in range(900)], "→"), True),
    "200 universal premises with three variables": (
        {f"h{i}": f"∀ x y z, R{i % 7} x y ∧ R{(i + 1) % 7} y z → R{(i + 2) % 7} x z" for i in range(200)},
        "∀ x, ∃ y, R0 x y ∨ R3 y x", False),
    "300 nested negations": ({"h1": "P a"}, "¬ " * 300 + "P a", True),
}


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3", "prover9"), timeout_ms=300, workers=1)) as v:
        assert v.check(Entailment({"h1": "P a"}, "P a")).status is Status.VALID  # workers started
        yield v


@pytest.mark.parametrize("name", list(HOSTILE))
def test_every_hostile_check_returns_within_the_documented_bound(verifier, name):
    premises, conclusion, may_be_valid = HOSTILE[name]
    assert len(conclusion) <= 10_000 and all(len(p) <= 10_000 for p in premises.values())  # legal sizes
    start = time.perf_counter()
    verdict = verifier.check(Entailment(premises, conclusion))
    elapsed_ms = (time.perf_counter() - start) * 1000
    assert elapsed_ms <= verifier.response_bound_ms(), (name, verdict)
    assert verdict.status is not Status.ERROR, verdict.detail  # legal input, a real answer
    if not may_be_valid:
        assert verdict.status is not Status.VALID, verdict


def test_the_bound_is_documented_from_the_config():
    with Verifier(VerifierConfig(backends=("z3", "prover9"), timeout_ms=300, workers=1)) as v:
        from prosfi.verify.verifier import RESPONSE_MARGIN_MS

        assert v.response_bound_ms() == 2 * 300 + 1000 + v.config.truth_table_max_ms + RESPONSE_MARGIN_MS


def _decide(premises: list[str], conclusion: str, **budget):
    formulas = [parse(p) for p in premises]
    goal = parse(conclusion)
    return truth_table.decide(formulas, goal, check_signature([*formulas, goal]), **budget)


def test_truth_table_gives_up_when_its_node_budget_runs_out():
    # 2^40 evaluations of the body without a budget; with one, nothing is claimed and the provers decide
    assert _decide(["P a", "P b"], binders(40)) is None
    assert _decide(["P a", "P b"], binders(40), max_nodes=10**12, max_ms=50) is None  # the wall-clock backstop


def test_truth_table_still_decides_what_fits_its_budget():
    assert _decide(["P a", "P b"], binders(3)) is None  # no countermodel over {a, b}; Z3 finds one with 3
    decided = _decide(["∀ x, P x → Q x", "P a"], "Q a")
    assert decided is not None and decided.status is Status.VALID
    decided = _decide(["P a"], binders(8, "P x0 ∧ P x7"), max_nodes=10**6)
    assert decided is None or decided.status is not Status.VALID
    assert _decide(["P a"], "Q a").status is Status.INVALID
    # the same check, starved of nodes: no answer rather than a wrong one
    assert _decide(["P a"], "Q a", max_nodes=1) is None


def test_gold_trace_searches_give_up_on_their_budget(monkeypatch):
    from prosfi.data import fol_proof, kk_proof
    from prosfi.data.kk import KKConfig, generate
    from prosfi.data.pqa_gen import FOLGenConfig
    from prosfi.data.pqa_gen import generate as pqa_generate

    puzzle = generate(KKConfig(people=3), 1, 0)[0]
    problems = pqa_generate(FOLGenConfig(difficulty="easy"), 3, 0)
    premises = {p.id: p.formal for p in puzzle.premises}
    atoms = list(puzzle.assignment)
    assert kk_proof.derive_assignment(premises, atoms, puzzle.assignment) is not None
    derivable = [p for p in problems if fol_proof.derive_label(p) is not None]
    assert derivable
    monkeypatch.setattr(kk_proof, "SEARCH_SECONDS", -1.0)
    monkeypatch.setattr(fol_proof, "SEARCH_SECONDS", -1.0)
    assert kk_proof.derive_assignment(premises, atoms, puzzle.assignment) is None
    assert all(fol_proof.derive_label(p) is None for p in derivable)


def test_prosfi_check_answers_the_issue_line_and_the_rest_of_the_file(tmp_path):
    import json

    lines = [
        {"id": "before", "premises": {"h1": "P a"}, "conclusion": "P a"},
        {"id": "deep", "premises": {"h1": "P a", "h2": "P b"}, "conclusion": binders(40)},
        {"id": "after", "premises": {"h1": "P a"}, "conclusion": "Q a"},
    ]
    path = tmp_path / "steps.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "prosfi.cli", "check", str(path), "--workers", "1",
                           "--timeout-ms", "500"], check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in out] == ["before", "deep", "after"]
    assert [r["verdict"] for r in out] == ["valid", out[1]["verdict"], "invalid"]
    assert out[1]["verdict"] in ("invalid", "unknown")
