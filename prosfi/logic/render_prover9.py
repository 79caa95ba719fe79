"""AST → Prover9 (LADR syntax).

Prover9 reads a free name starting with u–z as a variable (so `Kind(wendy)` would prove
`Kind(bob)`), has keywords and options of its own, and accepts only ASCII. So no model text
reaches it: every symbol gets a generated name (`p<n>` predicates, `f<n>` functions, `c<n>`
constants, with a reversible map), every bound variable `v<n>` (one number per binder, so
shadowing cannot confuse anything), and every compound formula is parenthesised.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

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

_LETTER = {"pred": "p", "func": "f", "const": "c"}
_OP = {And: "&", Or: "|", Implies: "->", Iff: "<->"}


class Prover9Names:
    """A reversible map between a signature's symbols and safe LADR names."""

    def __init__(self, signature: Signature):
        self.signature = signature
        self.to_ladr: dict[str, str] = {}
        counts = {"pred": 0, "func": 0, "const": 0}
        for symbol in signature.key:  # sorted: the same signature always gets the same names
            self.to_ladr[symbol.name] = f"{_LETTER[symbol.role]}{counts[symbol.role]}"
            counts[symbol.role] += 1
        self.from_ladr: dict[str, str] = {v: k for k, v in self.to_ladr.items()}

    def name(self, name: str, role: str, arity: int) -> str:
        symbol = self.signature.get(name)
        if symbol is None:
            raise SignatureError(f"symbol `{name}` is not in the signature", name)
        if symbol.role != role or symbol.arity != arity:
            used = Symbol(name, role, arity)  # type: ignore[arg-type]
            raise SignatureError(f"symbol `{name}` is declared as {symbol.describe()} but used as "
                                 f"{used.describe()}", name)
        return self.to_ladr[name]


class Prover9Renderer:
    """Renders closed formulas over one signature as LADR formulas (without the final `.`)."""

    def __init__(self, signature: Signature):
        self.names = Prover9Names(signature)

    def formula(self, f: Formula) -> str:
        return self._formula(f, {}, [0])

    def _formula(self, f: Formula, env: dict[str, str], counter: list[int]) -> str:
        kind = type(f)
        if kind is Pred:
            name = self.names.name(f.name, "pred", len(f.args))
            return name if not f.args else f"{name}({','.join(map(self._term, f.args, repeat(env)))})"
        if kind is Not:
            return f"-({self._formula(f.body, env, counter)})"
        if kind in _OP:
            return f"({self._formula(f.left, env, counter)} {_OP[kind]} {self._formula(f.right, env, counter)})"
        if kind is Xor:
            return f"-({self._formula(f.left, env, counter)} <-> {self._formula(f.right, env, counter)})"
        if kind is Eq:
            return f"({self._term(f.left, env)} = {self._term(f.right, env)})"
        if kind is Forall or kind is Exists:
            var = f"v{counter[0]}"
            counter[0] += 1
            inner = dict(env)
            inner[f.var] = var
            word = "all" if kind is Forall else "exists"
            return f"({word} {var} {self._formula(f.body, inner, counter)})"
        if kind is Top:
            return "$T"
        if kind is Bottom:
            return "$F"
        raise TypeError(f"not a formula node: {f!r}")

    def _term(self, t: Term, env: dict[str, str]) -> str:
        kind = type(t)
        if kind is Var:
            var = env.get(t.name)
            if var is None:
                raise ValueError(f"variable `{t.name}` is not bound by any quantifier")
            return var
        if kind is Const:
            return self.names.name(t.name, "const", 0)
        if kind is Fn:
            name = self.names.name(t.name, "func", len(t.args))
            return f"{name}({','.join(map(self._term, t.args, repeat(env)))})"
        raise TypeError(f"not a term: {t!r}")


def prover9_input(premises: Iterable[Formula], conclusion: Formula, signature: Signature,
                  max_seconds: int, *, max_megs: int | None = None) -> str:
    """A complete Prover9 input file: a proof exists ⇔ the premises entail the conclusion."""
    if int(max_seconds) < 1:
        raise ValueError(f"max_seconds must be a positive integer, got {max_seconds!r}")
    render = Prover9Renderer(signature).formula
    lines = [
        "set(quiet).",
        "clear(print_initial_clauses).",
        "clear(print_kept).",
        "clear(print_given).",
        # Auto_denials raises max_proofs to 2 on some Horn sets; a proof found while clausifying
        # (inconsistent premises) then ends in exit sos_empty despite "1 proof". Keep it at 1.
        "clear(auto_denials).",
        f"assign(max_seconds, {int(max_seconds)}).",
    ]
    if max_megs is not None:
        lines.append(f"assign(max_megs, {int(max_megs)}).")
    lines.append("formulas(assumptions).")
    lines.extend(f"{render(p)}." for p in premises)
    lines.append("end_of_list.")
    lines.append("formulas(goals).")
    lines.append(f"{render(conclusion)}.")
    lines.append("end_of_list.")
    return "\n".join(lines) + "\n"


__all__ = ["Prover9Names", "Prover9Renderer", "prover9_input"]
