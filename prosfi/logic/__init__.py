"""The formula language: Lean 4 syntax for first-order logic, parsed into one AST that every
prover backend renders from (docs/formulas.md).

    parse(text) -> Formula                    FormulaError on any bad input
    check_signature(formulas) -> Signature    SignatureError on an arity/role clash
    canonical(f) -> str                       alpha-normalised cache key
    pretty(f) -> str                          Lean 4 text that parses back to f
Renderers: prosfi.logic.render_z3, render_prover9, render_lean.
"""

import sys

from prosfi.logic.ast import (
    BINARY,
    QUANTIFIERS,
    And,
    Bottom,
    Const,
    Eq,
    Exists,
    Fn,
    Forall,
    Formula,
    Iff,
    Implies,
    Not,
    Or,
    Pred,
    Term,
    Top,
    Var,
    Xor,
)
from prosfi.logic.errors import FormulaError, SignatureError
from prosfi.logic.parser import DEFAULT_MAX_CHARS, DEFAULT_MAX_DEPTH, parse
from prosfi.logic.printer import canonical, pretty
from prosfi.logic.signature import Signature, Symbol, check_signature

# Parsed formulas nest up to DEFAULT_MAX_DEPTH levels, and the AST's dataclass `==` costs three
# interpreter recursion units per level (hash two, our walkers one). Python's default limit of
# 1000 would leave a caller almost nothing at 300 nested negations, so make sure it is at least
# RECURSION_FLOOR. This only raises a ceiling: the depth we actually reach stays bounded by
# max_depth, so the C stack use is what it is with the default limit.
RECURSION_FLOOR = 4 * DEFAULT_MAX_DEPTH + 600
if sys.getrecursionlimit() < RECURSION_FLOOR:
    sys.setrecursionlimit(RECURSION_FLOOR)

__all__ = [
    "BINARY",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_DEPTH",
    "QUANTIFIERS",
    "And",
    "Bottom",
    "Const",
    "Eq",
    "Exists",
    "Fn",
    "Forall",
    "Formula",
    "FormulaError",
    "Iff",
    "Implies",
    "Not",
    "Or",
    "Pred",
    "Signature",
    "SignatureError",
    "Symbol",
    "Term",
    "Top",
    "Var",
    "Xor",
    "canonical",
    "check_signature",
    "parse",
    "pretty",
]
