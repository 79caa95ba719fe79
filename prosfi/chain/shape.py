"""How much a formula says, measured in facts: the clauses of its conjunctive normal form.

A step is one small inference when its conclusion states few facts and its citations carry few
(see `ChainConfig.max_conjuncts` and `max_weight`). Counting clauses rather than top-level `∧`
sees through disguised bundles: `¬ (A → ¬ B)`, `¬ (¬ A ∨ ¬ B)`, `(A ∧ B) ∨ (A ∧ B)` and
`∀ x, P x ∧ Q x` each state two facts; a rule `A ∧ B → C` or a literal states one. Quantifiers are
looked through (the matrix's clauses are counted), tautological clauses are dropped and subsumed
ones merged, so a formula never counts more than an equivalent rewrite of it needs.
"""

from __future__ import annotations

from prosfi.logic import ast

TOO_MANY = 10_000  # counting stops here (a formula this big is never a small inference)

_Clauses = frozenset  # frozenset of clauses; a clause is a frozenset of (atom, sign) literals


def facts(f: ast.Formula, limit: int = 64) -> int:
    """Clauses in a CNF of `f` after dropping tautologies and subsumed clauses; `TOO_MANY` when
    the CNF would exceed `limit` clauses at any point."""
    try:
        clauses = _cnf(f, True, limit)
    except _Overflow:
        return TOO_MANY
    except RecursionError:
        return TOO_MANY
    return len(_minimal(clauses))


class _Overflow(Exception):
    pass


_TRUE: frozenset = frozenset()  # no clauses
_FALSE: frozenset = frozenset({frozenset()})  # the empty clause


def _cnf(f, positive: bool, limit: int) -> frozenset:
    kind = type(f)
    if kind is ast.Pred or kind is ast.Eq:
        return frozenset({frozenset({(f, positive)})})
    if kind is ast.Top:
        return _TRUE if positive else _FALSE
    if kind is ast.Bottom:
        return _FALSE if positive else _TRUE
    if kind is ast.Not:
        return _cnf(f.body, not positive, limit)
    if kind is ast.Forall or kind is ast.Exists:
        return _cnf(f.body, positive, limit)
    a, b = f.left, f.right
    if kind is ast.And:
        return _and(_cnf(a, True, limit), _cnf(b, True, limit), limit) if positive else \
            _or(_cnf(a, False, limit), _cnf(b, False, limit), limit)
    if kind is ast.Or:
        return _or(_cnf(a, True, limit), _cnf(b, True, limit), limit) if positive else \
            _and(_cnf(a, False, limit), _cnf(b, False, limit), limit)
    if kind is ast.Implies:  # ¬a ∨ b; negated: a ∧ ¬b
        return _or(_cnf(a, False, limit), _cnf(b, True, limit), limit) if positive else \
            _and(_cnf(a, True, limit), _cnf(b, False, limit), limit)
    same = (kind is ast.Iff) == positive  # a ↔ b, or ¬ (a ⊕ b)
    if same:  # (¬a ∨ b) ∧ (a ∨ ¬b)
        return _and(_or(_cnf(a, False, limit), _cnf(b, True, limit), limit),
                    _or(_cnf(a, True, limit), _cnf(b, False, limit), limit), limit)
    # (a ∨ b) ∧ (¬a ∨ ¬b)
    return _and(_or(_cnf(a, True, limit), _cnf(b, True, limit), limit),
                _or(_cnf(a, False, limit), _cnf(b, False, limit), limit), limit)


def _and(x: frozenset, y: frozenset, limit: int) -> frozenset:
    out = x | y
    if len(out) > limit:
        out = _minimal(out)
        if len(out) > limit:
            raise _Overflow
    return out


def _or(x: frozenset, y: frozenset, limit: int) -> frozenset:
    if len(x) * len(y) > limit * limit:
        raise _Overflow
    out = set()
    for c in x:
        for d in y:
            e = c | d
            if not _tautology(e):
                out.add(e)
    out = _minimal(frozenset(out))
    if len(out) > limit:
        raise _Overflow
    return out


def _tautology(clause: frozenset) -> bool:
    return any((atom, not sign) in clause for atom, sign in clause)


def _minimal(clauses: frozenset) -> frozenset:
    """Drop tautological clauses and clauses a smaller one subsumes."""
    kept: list[frozenset] = []
    for c in sorted((c for c in clauses if not _tautology(c)), key=len):
        if not any(k <= c for k in kept):
            kept.append(c)
    return frozenset(kept)


def is_literal(f: ast.Formula) -> bool:
    """An atom `P t…`, `a = b` (a, b different terms) or the negation of one. No such formula is
    true in every model, so a literal step needs no tautology check."""
    if isinstance(f, ast.Not):
        f = f.body
    if isinstance(f, ast.Pred):
        return True
    return isinstance(f, ast.Eq) and f.left != f.right


def is_fact(f: ast.Formula) -> bool:
    """A literal or a conjunction of literals: a fact, not a rule."""
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, ast.And):
            stack.extend((g.left, g.right))
        elif not is_literal(g):
            return False
    return True


def literals(f: ast.Formula) -> list[ast.Formula]:
    """The literal conjuncts of `f` (flattening `∧`): what a step concluding `f` shows outright."""
    out, stack = [], [f]
    while stack:
        g = stack.pop()
        if isinstance(g, ast.And):
            stack.extend((g.right, g.left))
        elif is_literal(g):
            out.append(g)
    return out


__all__ = ["TOO_MANY", "facts", "is_fact", "is_literal", "literals"]
