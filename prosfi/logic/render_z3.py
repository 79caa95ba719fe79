"""AST → Z3: solver objects (`Z3Renderer`) or a self-contained SMT-LIB2 script (`to_smtlib`).

One uninterpreted sort is the domain (one non-empty domain, as everywhere in prosfi; SMT-LIB sorts are
non-empty). Every symbol is renamed by role (`P_`, `F_`, `C_`, bound variables `V_`) and escaped
to ASCII, so no name can hit a Z3 builtin (`and`, `true`, `distinct`, …) or another symbol, and
the SMT-LIB text quotes every identifier besides.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

import z3
from z3 import z3core
from z3.z3types import Ast, Pattern

from prosfi.logic.ast import (
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
from prosfi.logic.errors import SignatureError
from prosfi.logic.signature import Signature, Symbol

DOMAIN_SORT = "U"
_PREFIX = {"pred": "P_", "func": "F_", "const": "C_"}
_VAR_PREFIX = "V_"


def escape(name: str) -> str:
    """ASCII-only, injective: letters, digits and `_` stay; anything else becomes `$<hex>$`."""
    if name.isascii() and name.replace("_", "a").isalnum():
        return name
    return "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else f"${ord(c):x}$" for c in name)


def mangle(symbol: Symbol) -> str:
    """The Z3 / SMT-LIB name of a symbol."""
    return _PREFIX[symbol.role] + escape(symbol.name)


def mangle_var(name: str) -> str:
    return _VAR_PREFIX + escape(name)


def _lookup(signature: Signature, name: str, role: str, arity: int) -> Symbol:
    symbol = signature.get(name)
    if symbol is None:
        raise SignatureError(f"symbol `{name}` is not in the signature", name)
    if symbol.role != role or symbol.arity != arity:
        used = Symbol(name, role, arity)  # type: ignore[arg-type]
        raise SignatureError(f"symbol `{name}` is declared as {symbol.describe()} but used as {used.describe()}",
                             name)
    return symbol


class Z3Renderer:
    """Declares a signature in a Z3 context once and renders formulas over it.

    Keep one renderer per (problem, context): declarations and rendered formulas are reused, so
    a solver that shares premises across steps (push/pop) sees the same Z3 terms. Nodes are
    built with Z3's C API directly (the same calls `z3.And`, `z3.ForAll`, … end in, without
    their argument coercion), which makes rendering several times faster; the AST is
    well-sorted by construction (the signature check), so nothing is lost.
    """

    def __init__(self, signature: Signature, ctx: z3.Context | None = None, *, sort_name: str = DOMAIN_SORT):
        self.signature = signature
        self.ctx = ctx
        self._ctx = z3.get_ctx(ctx)
        self._ref = self._ctx.ref()
        self.domain = z3.DeclareSort(sort_name, ctx)
        self._decls: dict[str, z3.FuncDeclRef | z3.ExprRef] = {}
        for symbol in signature.values():
            name = mangle(symbol)
            if symbol.role == "const":
                decl = z3.Const(name, self.domain)
            elif symbol.role == "pred" and symbol.arity == 0:
                decl = z3.Bool(name, ctx)
            elif symbol.role == "pred":
                decl = z3.Function(name, *([self.domain] * symbol.arity), z3.BoolSort(ctx))
            else:
                decl = z3.Function(name, *([self.domain] * symbol.arity), self.domain)
            self._decls[symbol.name] = decl
        self._true = z3.BoolVal(True, ctx)
        self._false = z3.BoolVal(False, ctx)
        self._no_name = z3.to_symbol("", self._ctx)
        self._vars: dict[str, z3.ExprRef] = {}
        self._cache: dict[Formula, z3.BoolRef] = {}

    def formula(self, f: Formula) -> z3.BoolRef:
        """The Z3 Boolean term for a closed formula over this signature."""
        hit = self._cache.get(f)
        if hit is None:
            hit = self._cache[f] = self._formula(f)
        return hit

    def term(self, t: Term) -> z3.ExprRef:
        kind = type(t)
        if kind is Var:
            return self._var(t.name)
        if kind is Const:
            _lookup(self.signature, t.name, "const", 0)
            return self._decls[t.name]
        if kind is Fn:
            _lookup(self.signature, t.name, "func", len(t.args))
            return z3.ExprRef(self._app(self._decls[t.name], list(map(self.term, t.args))), self._ctx)
        raise TypeError(f"not a term: {t!r}")

    def _var(self, name: str) -> z3.ExprRef:
        # Bound variables are constants that ForAll/Exists abstract; an inner binder abstracts its
        # occurrences first, so a shadowed name is bound by the nearest binder, as in Lean.
        v = self._vars.get(name)
        if v is None:
            v = self._vars[name] = z3.Const(mangle_var(name), self.domain)
        return v

    def _app(self, decl: z3.FuncDeclRef, args: list[z3.ExprRef]):
        array = (Ast * len(args))(*[a.as_ast() for a in args])
        return z3core.Z3_mk_app(self._ref, decl.as_func_decl(), len(args), array)

    def _formula(self, f: Formula) -> z3.BoolRef:
        kind = type(f)
        ref, ctx = self._ref, self._ctx
        if kind is Pred:
            _lookup(self.signature, f.name, "pred", len(f.args))
            decl = self._decls[f.name]
            if not f.args:
                return decl
            return z3.BoolRef(self._app(decl, list(map(self.term, f.args))), ctx)
        if kind is Not:
            return z3.BoolRef(z3core.Z3_mk_not(ref, self._formula(f.body).as_ast()), ctx)
        if kind is And or kind is Or:
            left, right = self._formula(f.left), self._formula(f.right)
            array = (Ast * 2)(left.as_ast(), right.as_ast())
            make = z3core.Z3_mk_and if kind is And else z3core.Z3_mk_or
            return z3.BoolRef(make(ref, 2, array), ctx)
        if kind in _Z3_BINARY:
            left, right = self._formula(f.left), self._formula(f.right)
            return z3.BoolRef(_Z3_BINARY[kind](ref, left.as_ast(), right.as_ast()), ctx)
        if kind is Eq:
            left, right = self.term(f.left), self.term(f.right)
            return z3.BoolRef(z3core.Z3_mk_eq(ref, left.as_ast(), right.as_ast()), ctx)
        if kind is Forall or kind is Exists:
            body = self._formula(f.body)
            bound = (Ast * 1)(self._var(f.var).as_ast())
            # exactly what z3.ForAll / z3.Exists do: weight 1, no qid/skid, no patterns
            ast = z3core.Z3_mk_quantifier_const_ex(ref, kind is Forall, 1, self._no_name, self._no_name, 1, bound,
                                                  0, (Pattern * 0)(), 0, (Ast * 0)(), body.as_ast())
            return z3.QuantifierRef(ast, ctx)
        if kind is Top:
            return self._true
        if kind is Bottom:
            return self._false
        raise TypeError(f"not a formula node: {f!r}")


_Z3_BINARY = {Implies: z3core.Z3_mk_implies, Iff: z3core.Z3_mk_iff, Xor: z3core.Z3_mk_xor}


# ---------------------------------------------------------------- SMT-LIB2 text
def _q(name: str) -> str:
    return f"|{name}|"


def smtlib_formula(f: Formula, signature: Signature) -> str:
    """One formula as an SMT-LIB2 term over `signature` (identifiers quoted and mangled)."""
    kind = type(f)
    if kind is Pred:
        name = _q(mangle(_lookup(signature, f.name, "pred", len(f.args))))
        return name if not f.args else f"({name} {' '.join(map(smtlib_term, f.args, repeat(signature)))})"
    if kind is Not:
        return f"(not {smtlib_formula(f.body, signature)})"
    if kind in _SMT_OP:
        return f"({_SMT_OP[kind]} {smtlib_formula(f.left, signature)} {smtlib_formula(f.right, signature)})"
    if kind is Eq:
        return f"(= {smtlib_term(f.left, signature)} {smtlib_term(f.right, signature)})"
    if kind is Forall or kind is Exists:
        word = "forall" if kind is Forall else "exists"
        return f"({word} (({_q(mangle_var(f.var))} {DOMAIN_SORT})) {smtlib_formula(f.body, signature)})"
    if kind is Top:
        return "true"
    if kind is Bottom:
        return "false"
    raise TypeError(f"not a formula node: {f!r}")


_SMT_OP = {And: "and", Or: "or", Implies: "=>", Iff: "=", Xor: "xor"}


def smtlib_term(t: Term, signature: Signature) -> str:
    kind = type(t)
    if kind is Var:
        return _q(mangle_var(t.name))
    if kind is Const:
        return _q(mangle(_lookup(signature, t.name, "const", 0)))
    if kind is Fn:
        name = _q(mangle(_lookup(signature, t.name, "func", len(t.args))))
        return f"({name} {' '.join(map(smtlib_term, t.args, repeat(signature)))})"
    raise TypeError(f"not a term: {t!r}")


def to_smtlib(premises: Iterable[Formula], conclusion: Formula, signature: Signature) -> str:
    """A complete SMT-LIB2 script: unsat ⇔ the premises entail the conclusion."""
    lines = [f"(declare-sort {DOMAIN_SORT} 0)"]
    for symbol in signature.key:
        result = "Bool" if symbol.role == "pred" else DOMAIN_SORT
        args = " ".join([DOMAIN_SORT] * symbol.arity)
        lines.append(f"(declare-fun {_q(mangle(symbol))} ({args}) {result})")
    for premise in premises:
        lines.append(f"(assert {smtlib_formula(premise, signature)})")
    lines.append(f"(assert (not {smtlib_formula(conclusion, signature)}))")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


__all__ = [
    "DOMAIN_SORT",
    "Z3Renderer",
    "escape",
    "mangle",
    "mangle_var",
    "smtlib_formula",
    "smtlib_term",
    "to_smtlib",
]
