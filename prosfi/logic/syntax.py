"""What a formula is made of, and substitution: the syntactic queries the gold derivations
(`prosfi.data.fol_proof`), the PRM's counterfactual steps (`prosfi.domains.logic.perturbations`)
and the chain guards (`prosfi.chain.facts`) share, so each walks formulas one way.

    substitute(f, var, const)   every free `var` replaced by the constant
    rename_free(f, old, new)    the free variable `old` renamed `new`
    variable_free(f)            a truth-table formula: connectives over atoms of constants only
    constants(formulas)         constant names, in order of first appearance
    predicates(f)               predicate names
    has_forall(f)               whether a ∀ occurs under connectives
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from prosfi.logic import ast


def substitute(f, var: str, const: str):
    """`f` with every free occurrence of the variable `var` replaced by the constant `const`
    (a quantifier binding `var` shadows it)."""
    if isinstance(f, ast.Var):
        return ast.Const(const) if f.name == var else f
    if isinstance(f, ast.Const):
        return f
    if isinstance(f, (ast.Fn, ast.Pred)):
        return replace(f, args=tuple(substitute(a, var, const) for a in f.args))
    if isinstance(f, ast.Not):
        return ast.Not(substitute(f.body, var, const))
    if isinstance(f, ast.BINARY):
        return type(f)(substitute(f.left, var, const), substitute(f.right, var, const))
    if isinstance(f, ast.QUANTIFIERS):
        return f if f.var == var else replace(f, body=substitute(f.body, var, const))
    if isinstance(f, ast.Eq):
        return ast.Eq(substitute(f.left, var, const), substitute(f.right, var, const))
    return f  # Top, Bottom


def rename_free(f, old: str, new: str):
    """Rename the free variable `old` to `new` (to compare two formulas that bind different names)."""
    if isinstance(f, ast.Var):
        return ast.Var(new) if f.name == old else f
    if isinstance(f, (ast.Fn, ast.Pred)):
        return replace(f, args=tuple(rename_free(a, old, new) for a in f.args))
    if isinstance(f, ast.Not):
        return ast.Not(rename_free(f.body, old, new))
    if isinstance(f, ast.BINARY):
        return type(f)(rename_free(f.left, old, new), rename_free(f.right, old, new))
    if isinstance(f, ast.QUANTIFIERS):
        return f if f.var == old else replace(f, body=rename_free(f.body, old, new))
    if isinstance(f, ast.Eq):
        return ast.Eq(rename_free(f.left, old, new), rename_free(f.right, old, new))
    return f


def variable_free(f) -> bool:
    """Whether `f` is connectives over ⊤, ⊥ and predicates applied to constants only (no variable,
    quantifier, function term or equality): what a truth table over its atoms decides."""
    if isinstance(f, ast.Pred):
        return all(isinstance(a, ast.Const) for a in f.args)
    if isinstance(f, ast.Not):
        return variable_free(f.body)
    if isinstance(f, ast.BINARY):
        return variable_free(f.left) and variable_free(f.right)
    return isinstance(f, (ast.Top, ast.Bottom))


def constants(formulas: Iterable) -> list[str]:
    """The constants the formulas name, each once, in order of first appearance (left to right)."""
    seen: list[str] = []
    stack = list(reversed(list(formulas)))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Const):
            if n.name not in seen:
                seen.append(n.name)
        elif isinstance(n, (ast.Pred, ast.Fn)):
            stack.extend(reversed(n.args))
        elif isinstance(n, ast.Not):
            stack.append(n.body)
        elif isinstance(n, (ast.BINARY, ast.Eq)):
            stack.extend((n.right, n.left))
        elif isinstance(n, ast.QUANTIFIERS):
            stack.append(n.body)
    return seen


def predicates(f) -> set[str]:
    """The names of the predicates `f` applies (equality is not a predicate)."""
    out, stack = set(), [f]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Pred):
            out.add(n.name)
        elif isinstance(n, (ast.Not, *ast.QUANTIFIERS)):
            stack.append(n.body)
        elif isinstance(n, ast.BINARY):
            stack.extend((n.left, n.right))
    return out


def has_forall(f) -> bool:
    """Whether a ∀ occurs in `f` under connectives and ∃ (so `f` has instances about any constant)."""
    stack = [f]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Forall):
            return True
        if isinstance(n, (ast.Not, ast.Exists)):
            stack.append(n.body)
        elif isinstance(n, ast.BINARY):
            stack.extend((n.left, n.right))
    return False


__all__ = ["constants", "has_forall", "predicates", "rename_free", "substitute", "variable_free"]
