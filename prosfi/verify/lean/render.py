"""Whole Lean theorems from the AST (never from model text): step lemmas and direct-Lean statements.

A check `h1 … hn ⊢ φ` over a signature becomes

    set_option maxHeartbeats N in
    set_option autoImplicit false in
    theorem prosfi_step (U : Type) [Nonempty U] (Kind : U → Prop) (candy : U)
        (h1 : ∀ x, Kind x → Nice x) (h2 : Kind candy) :
        Nice candy := by
      first
        | (simp_all; done)
        | (aesop (config := { terminal := true }); done)

over an abstract non-empty domain `U`: constants are `U` variables, n-ary functions
`U → … → U`, predicates `U → … → Prop` (nullary: `Prop`), premises hypotheses. Formulas are
printed by `prosfi.logic.render_lean.to_lean` with `domain="U"` (every binder is typed `U`,
whatever sort the formula named), `Xor' A B` as `¬(A ↔ B)` (core Lean has no `Xor'`; linear in
size, unlike the ∧/∨ expansion) and keyword-safe names (`lean_name`, `«end»`). Symbols get
unique Lean names (a symbol named `U` becomes `U_1`); bound variables named like the domain, a
hypothesis or the theorem are renamed here, bound variables named like a symbol by `to_lean`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prosfi.logic.ast import (
    And,
    Bottom,
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

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature
    from prosfi.verify.backend import Check
    from prosfi.verify.lean.config import LeanConfig

DOMAIN = "U"
STEP_THEOREM = "prosfi_step"
DIRECT_THEOREM = "prosfi_direct"
# The axioms a classical proof may use; anything else (sorryAx, Lean.ofReduceBool, …) fails.
STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
_PLAIN_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_']*$")


@dataclass(frozen=True)
class LeanStatement:
    """`theorem NAME binders : claim` without its proof. `hypotheses`: premise id → Lean name;
    `symbols`: symbol → Lean name (unescaped); `formulas`: premise id → Lean text; `claim`: its text."""

    name: str
    text: str
    hypotheses: Mapping[str, str]
    symbols: Mapping[str, str]
    formulas: Mapping[str, str]
    claim: str


# ---------------------------------------------------------------- AST rewrites
def rename_bound(f: Formula, rename: Mapping[str, str]) -> Formula:
    """Rename bound variables by `rename` (name → new name) everywhere; symbols are untouched."""
    kind = type(f)
    if kind is Pred:
        return Pred(f.name, tuple(_term(a, rename) for a in f.args)) if f.args else f
    if kind is Eq:
        return Eq(_term(f.left, rename), _term(f.right, rename))
    if kind is Top or kind is Bottom:
        return f
    if kind is Not:
        return Not(rename_bound(f.body, rename))
    if kind in (And, Or, Implies, Iff, Xor):
        return kind(rename_bound(f.left, rename), rename_bound(f.right, rename))
    if kind is Forall or kind is Exists:
        return kind(rename.get(f.var, f.var), rename_bound(f.body, rename), f.sort)
    raise TypeError(f"not a formula node: {f!r}")


def _term(t: Term, rename: Mapping[str, str]) -> Term:
    if type(t) is Var:
        return Var(rename.get(t.name, t.name))
    if type(t) is Fn:
        return Fn(t.name, tuple(_term(a, rename) for a in t.args))
    return t


def bound_names(f: Formula) -> set[str]:
    kind = type(f)
    if kind is Not:
        return bound_names(f.body)
    if kind in (And, Or, Implies, Iff, Xor):
        return bound_names(f.left) | bound_names(f.right)
    if kind is Forall or kind is Exists:
        return {f.var} | bound_names(f.body)
    return set()


# ---------------------------------------------------------------- names
def _fresh(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def symbol_names(signature: Signature, reserved: Iterable[str]) -> dict[str, str]:
    """Symbol → unique name (unescaped: `to_lean` and the binders escape it with `lean_name`)."""
    from prosfi.logic.render_lean import lean_name

    taken = set(reserved)
    names: dict[str, str] = {}
    for name in sorted(signature):
        fresh = name
        k = 0
        while lean_name(fresh) in taken:
            k += 1
            fresh = f"{name}_{k}"
        names[name] = fresh
        taken.add(lean_name(fresh))
    return names


def hypothesis_names(ids: Sequence[str], taken: set[str]) -> dict[str, str]:
    """Premise id → Lean hypothesis name: the id itself when it is a plain, free identifier."""
    from prosfi.logic.keywords import RESERVED

    out: dict[str, str] = {}
    for i, pid in enumerate(ids, 1):
        base = pid if _PLAIN_IDENT.match(pid) and pid not in RESERVED else f"hyp{i}"
        out[pid] = _fresh(base, taken)
        taken.add(out[pid])
    return out


def _type_of(role: str, arity: int) -> str:
    if role == "const":
        return DOMAIN
    result = "Prop" if role == "pred" else DOMAIN
    return " → ".join([DOMAIN] * arity + [result])


# ---------------------------------------------------------------- statements
def render_statement(premises: Sequence[tuple[str, Formula]], claim: Formula, signature: Signature,
                     name: str = STEP_THEOREM) -> LeanStatement:
    """The theorem statement (no proof) for `premises ⊢ claim` over `signature`."""
    from prosfi.logic.render_lean import lean_name, to_lean

    symbols = symbol_names(signature, {DOMAIN, name})
    taken = {DOMAIN, name, *(lean_name(n) for n in symbols.values())}
    hyps = hypothesis_names([pid for pid, _ in premises], taken)
    formulas = [f for _, f in premises] + [claim]
    all_bound = set().union(*(bound_names(f) for f in formulas))
    reserved = {DOMAIN, name, *hyps.values()}
    rename: dict[str, str] = {}
    for var in sorted(all_bound & reserved):
        rename[var] = _fresh(var, reserved | all_bound | set(rename.values()) | taken)

    def show(f: Formula) -> str:
        return to_lean(rename_bound(f, rename) if rename else f, names=symbols, domain=DOMAIN)

    binders = [f"({DOMAIN} : Type)", f"[Nonempty {DOMAIN}]"]
    for sym_name in sorted(signature):
        sym = signature[sym_name]
        binders.append(f"({lean_name(symbols[sym_name])} : {_type_of(sym.role, sym.arity)})")
    formulas_text = {pid: show(f) for pid, f in premises}
    for pid, _ in premises:
        binders.append(f"({hyps[pid]} : {formulas_text[pid]})")
    claim_text = show(claim)
    head = f"theorem {name}"
    text = head + " " + "\n    ".join(_wrap(binders, first=len(head) + 1)) + f" :\n    {claim_text}"
    return LeanStatement(name, text, hyps, symbols, formulas_text, claim_text)


def _wrap(binders: list[str], width: int = 96, first: int = 0) -> list[str]:
    """Binders joined into lines of at most `width` characters (the first line starts at `first`)."""
    lines: list[str] = []
    current = ""
    for b in binders:
        indent = first if not lines else 4
        if current and indent + len(current) + 1 + len(b) > width:
            lines.append(current)
            current = b
        else:
            current = f"{current} {b}" if current else b
    if current:
        lines.append(current)
    return lines


def tactic_cascade(tactics: Sequence[str]) -> str:
    """`first` over the tactics, each required to close the goal (`done`)."""
    if len(tactics) == 1:
        return f"({tactics[0]}; done)"
    return "first\n" + "\n".join(f"    | ({t}; done)" for t in tactics)


def render_command(statement: LeanStatement, proof: str, max_heartbeats: int, print_axioms: bool = False) -> str:
    """The REPL command: options, the theorem with `proof` (indented under `by`), and optionally
    `#print axioms` so the caller can refuse proofs that lean on non-standard axioms."""
    body = "\n".join(("  " + line) if line.strip() else "" for line in proof.split("\n"))
    text = (f"set_option maxHeartbeats {max_heartbeats} in\nset_option autoImplicit false in\n"
            f"{statement.text} := by\n{body}")
    if print_axioms:
        text += f"\n\n#print axioms {statement.name}"
    return text


def render_step(check: Check, signature: Signature, config: LeanConfig) -> str:
    """The REPL command for one step check, proved by the configured tactic cascade."""
    statement = render_statement(check.premises, check.conclusion, signature, STEP_THEOREM)
    return render_command(statement, tactic_cascade(config.tactics), config.max_heartbeats)


_AXIOMS = re.compile(r"depends on axioms:\s*\[([^\]]*)\]")


def axioms_used(messages: Iterable[Mapping]) -> list[str] | None:
    """Every axiom any `#print axioms` report names ([] for "does not depend on any axioms"),
    None when there is no report. Taking the union means an extra, forged report cannot hide
    the real one."""
    found: list[str] | None = None
    for m in messages:
        data = str(m.get("data", ""))
        for match in _AXIOMS.finditer(data):
            found = (found or []) + [a.strip() for a in match.group(1).split(",") if a.strip()]
        if "does not depend on any axioms" in data and found is None:
            found = []
    return found


__all__ = [
    "DIRECT_THEOREM",
    "DOMAIN",
    "STANDARD_AXIOMS",
    "STEP_THEOREM",
    "LeanStatement",
    "axioms_used",
    "hypothesis_names",
    "rename_bound",
    "render_command",
    "render_statement",
    "render_step",
    "symbol_names",
    "tactic_cascade",
]
