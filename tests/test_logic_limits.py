"""Formulas at the depth limit go through every walker of the package without a RecursionError."""

from __future__ import annotations

import pytest
import z3

from prosfi.logic import DEFAULT_MAX_DEPTH, FormulaError, canonical, check_signature, parse, pretty
from prosfi.logic.render_lean import to_lean
from prosfi.logic.render_prover9 import Prover9Renderer
from prosfi.logic.render_z3 import Z3Renderer, smtlib_formula

N = DEFAULT_MAX_DEPTH - 5


def _binders(n: int) -> str:
    return "".join(f"{'∀' if k % 2 else '∃'} x{k}, " for k in range(n)) + f"R x0 x{n - 1}"


SHAPES = {
    "negations": "¬" * N + "P a",
    "conjunctions": " ∧ ".join(["P a"] * (N - 1)),
    "implications": "(" * (N - 2) + "A" + " → A)" * (N - 2),
    "binders": _binders(N - 2),
    "terms": "P " + "(f " * (N - 2) + "a" + ")" * (N - 2),
    "not_calls": "Not (" * (N // 2) + "A" + ")" * (N // 2),
    "xor_calls": "Xor' A (" * (N // 2) + "A" + ")" * (N // 2),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_walker_handles_the_depth_limit(shape):
    f = parse(SHAPES[shape])
    assert parse(pretty(f)) == f and hash(f) == hash(parse(pretty(f)))
    assert canonical(f)
    sig = check_signature([f])
    render = Z3Renderer(sig, ctx=z3.Context())
    assert z3.is_bool(render.formula(f))
    assert smtlib_formula(f, sig)
    assert Prover9Renderer(sig).formula(f)
    assert to_lean(f)


def test_beyond_the_limit_is_an_error_not_a_crash():
    for text in ("¬" * (DEFAULT_MAX_DEPTH + 1) + "A", "P " + "(f " * 600 + "a" + ")" * 600,
                 "Not (" * 600 + "A" + ")" * 600, _binders(DEFAULT_MAX_DEPTH + 1)):
        with pytest.raises(FormulaError, match="nested"):
            parse(text)
