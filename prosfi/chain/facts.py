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
from prosfi.logic.syntax import predicates

TOO_MANY = 10_000  # counting stops here (a formula this big is never a small inference)

_Clauses = frozenset  # frozenset of clauses; a clause is a frozenset of (atom, sign) literals


def facts(f: ast.Formula, limit: int = 64) -> int:
    """Clauses in a CNF of `f` after dropping tautologies and subsumed clauses; `TOO_MANY` when
    the CNF would exceed `limit` clauses at any point."""
    if _is_clause(f):  # the common shapes (`P a`, `∀ x, P x ∧ Q x → R x`) need no CNF
        return 1
    try:
        clauses = _CNF(limit).cnf(_apart(f), True)
    except _Overflow:
        return TOO_MANY
    except RecursionError:
        return TOO_MANY
    return len(_minimal(clauses))


def _is_clause(f) -> bool:
    """Under ∀: a literal, a disjunction of clauses, or a conjunction of literals implying a
    clause, and not a tautology (no literal next to its negation)."""
    while isinstance(f, ast.Forall):
        f = f.body
    out: list = []
    return _clause(f, True, out) and not _tautology(frozenset(out))


def _clause(f, positive: bool, out: list) -> bool:
    """Collect the literals of `f` (negated when not `positive`) if it is a clause that way."""
    if isinstance(f, ast.Not):
        if isinstance(f.body, (ast.Pred, ast.Eq)):
            out.append((f.body, not positive))
            return True
        return _clause(f.body, not positive, out)
    if isinstance(f, (ast.Pred, ast.Eq)):
        out.append((f, positive))
        return True
    if positive and isinstance(f, ast.Or) or not positive and isinstance(f, ast.And):
        return _clause(f.left, positive, out) and _clause(f.right, positive, out)
    if positive and isinstance(f, ast.Implies):
        return _clause(f.left, False, out) and _clause(f.right, True, out)
    return False


def _apart(f: ast.Formula) -> ast.Formula:
    """`f` with every binder renamed to a name of its own. The CNF looks through quantifiers, so two
    binders sharing a name would share atoms: `(∀ x, P x) ∨ (∀ x, ¬ P x) ∨ B` would look like a
    tautology and state 0 facts, a free bundle of B. Renamed apart, it states as many as B."""
    fresh = iter(range(1 << 62))

    def term(t, env):
        if isinstance(t, ast.Var):
            return ast.Var(env.get(t.name, t.name))
        if isinstance(t, ast.Fn):
            return ast.Fn(t.name, tuple(term(a, env) for a in t.args))
        return t

    def go(g, env):
        if isinstance(g, ast.Pred):
            return ast.Pred(g.name, tuple(term(a, env) for a in g.args)) if env and g.args else g
        if isinstance(g, ast.Eq):
            return ast.Eq(term(g.left, env), term(g.right, env)) if env else g
        if isinstance(g, ast.Not):
            return ast.Not(go(g.body, env))
        if isinstance(g, ast.QUANTIFIERS):
            name = f"{g.var}#{next(fresh)}"  # `#` is in no identifier the parser reads
            return type(g)(name, go(g.body, {**env, g.var: name}), g.sort)
        if isinstance(g, ast.BINARY):
            return type(g)(go(g.left, env), go(g.right, env))
        return g

    return go(f, {})


class _Overflow(Exception):
    pass


_TRUE: frozenset = frozenset()  # no clauses
_FALSE: frozenset = frozenset({frozenset()})  # the empty clause


class _CNF:
    """CNF by structural recursion, memoised per (node, polarity): `↔` and `⊕` visit each side in
    both polarities, so without the memo nested ones cost exponential time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.memo: dict[tuple[int, bool], frozenset] = {}
        self.keep: list = []  # nodes memoised by id stay alive for the call

    def cnf(self, f, positive: bool) -> frozenset:
        key = (id(f), positive)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._cnf(f, positive)
            self.keep.append(f)
        return hit

    def _cnf(self, f, positive: bool) -> frozenset:
        kind, cnf, limit = type(f), self.cnf, self.limit
        if kind is ast.Pred or kind is ast.Eq:
            return frozenset({frozenset({(f, positive)})})
        if kind is ast.Top:
            return _TRUE if positive else _FALSE
        if kind is ast.Bottom:
            return _FALSE if positive else _TRUE
        if kind is ast.Not:
            return cnf(f.body, not positive)
        if kind is ast.Forall or kind is ast.Exists:
            return cnf(f.body, positive)
        a, b = f.left, f.right
        if kind is ast.And:
            return _and(cnf(a, True), cnf(b, True), limit) if positive else _or(cnf(a, False), cnf(b, False), limit)
        if kind is ast.Or:
            return _or(cnf(a, True), cnf(b, True), limit) if positive else _and(cnf(a, False), cnf(b, False), limit)
        if kind is ast.Implies:  # ¬a ∨ b; negated: a ∧ ¬b
            return _or(cnf(a, False), cnf(b, True), limit) if positive else _and(cnf(a, True), cnf(b, False), limit)
        if (kind is ast.Iff) == positive:  # a ↔ b, or ¬ (a ⊕ b): (¬a ∨ b) ∧ (a ∨ ¬b)
            return _and(_or(cnf(a, False), cnf(b, True), limit), _or(cnf(a, True), cnf(b, False), limit), limit)
        # a ⊕ b, or ¬ (a ↔ b): (a ∨ b) ∧ (¬a ∨ ¬b)
        return _and(_or(cnf(a, True), cnf(b, True), limit), _or(cnf(a, False), cnf(b, False), limit), limit)


def _and(x: frozenset, y: frozenset, limit: int) -> frozenset:
    out = x | y
    if len(out) > limit:
        out = _minimal(out)
        if len(out) > limit:
            raise _Overflow
    return out


def _or(x: frozenset, y: frozenset, limit: int) -> frozenset:
    if len(x) * len(y) > 4 * limit:  # bounds the work: a product this big is never one small inference
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
    if len(clauses) == 1:
        return clauses if not _tautology(next(iter(clauses))) else _TRUE
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
    """A literal or a conjunction of literals, under any quantifiers (`P a`, `P a ∧ ¬ Q a`,
    `∀ x, P x`): a fact, not a rule (no implication to apply)."""
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, ast.And):
            stack.extend((g.left, g.right))
        elif isinstance(g, ast.QUANTIFIERS):
            stack.append(g.body)
        elif not is_literal(g):
            return False
    return True


def quantified(f: ast.Formula) -> bool:
    """Whether `f` has a quantifier anywhere: a rule about every (or some) individual, which later
    steps can apply again and again, unlike a ground instance."""
    stack = [f]
    while stack:
        g = stack.pop()
        if isinstance(g, ast.QUANTIFIERS):
            return True
        if isinstance(g, ast.Not):
            stack.append(g.body)
        elif isinstance(g, ast.BINARY):
            stack.extend((g.left, g.right))
    return False


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


def _holds(f, true: frozenset[str]) -> bool:
    """Truth of `f` in the one-element model where exactly the predicates in `true` hold (every
    constant and variable denotes the one element, so `=` holds and quantifiers are transparent)."""
    kind = type(f)
    if kind is ast.Pred:
        return f.name in true
    if kind is ast.Eq or kind is ast.Top:
        return True
    if kind is ast.Bottom:
        return False
    if kind is ast.Not:
        return not _holds(f.body, true)
    if kind is ast.Forall or kind is ast.Exists:
        return _holds(f.body, true)
    a = _holds(f.left, true)
    if kind is ast.And:
        return a and _holds(f.right, true)
    if kind is ast.Or:
        return a or _holds(f.right, true)
    if kind is ast.Implies:
        return not a or _holds(f.right, true)
    b = _holds(f.right, true)
    return a == b if kind is ast.Iff else a != b


def small_countermodel(premises: list[ast.Formula], conclusion: ast.Formula) -> bool:
    """Whether a one-element model makes every premise true and the conclusion false (then the
    premises do not entail it). Tries: nothing holds, everything holds, exactly the predicates of
    the premises' positive literal conjuncts hold, all but those of their negative ones. A cheap,
    sound filter before asking the verifier; False means "not found", not "entailed"."""
    names = set().union(*(predicates(f) for f in [*premises, conclusion]))
    pos, neg = set(), set()
    for f in premises:
        for lit in literals(f):
            if isinstance(lit, ast.Not):
                if isinstance(lit.body, ast.Pred):
                    neg.add(lit.body.name)
            elif isinstance(lit, ast.Pred):
                pos.add(lit.name)
    candidates = [frozenset(), frozenset(names), frozenset(pos), frozenset(names - neg)]
    lit = conclusion.body if isinstance(conclusion, ast.Not) else conclusion
    if isinstance(lit, ast.Pred):  # falsify just the conclusion's predicate, on top of each extreme
        flip = lit.name
        if isinstance(conclusion, ast.Not):
            candidates += [frozenset({flip}), frozenset(pos | {flip})]
        else:
            candidates += [frozenset(names - {flip}), frozenset(names - neg - {flip})]
    for true in candidates:
        try:
            if not _holds(conclusion, true) and all(_holds(f, true) for f in premises):
                return True
        except RecursionError:
            return False
    return False


__all__ = ["TOO_MANY", "facts", "is_fact", "is_literal", "literals", "small_countermodel"]
