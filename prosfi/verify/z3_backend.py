"""Z3 backend: premises ∧ ¬conclusion is unsat → valid; sat → invalid (Z3 found a countermodel);
unknown → unknown with Z3's reason (usually a timeout: some theories have only infinite models).

`session` is the fast path: one solver per backend (so per worker process) serves every check.
Symbols are declared once per solver; a check pushes a scope, asserts its premises and the
negated conclusion, solves and pops. Formulas go to Z3 as SMT-LIB text from
`prosfi.logic.render_z3.smtlib_formula` (cached per formula), parsed by Z3 itself: building the
same terms through Z3's Python API costs several times the solving. Symbols of different arity or
role have different mangled names, so checks of any problems can share the solver; nothing
asserted outside a scope but declarations.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from prosfi.verify.backend import Backend, Check
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature

# The shared solver is replaced after this many checks, so its declarations stay bounded.
CHECKS_PER_SOLVER = 5000
# Rendered formula texts kept per solver.
TEXTS_KEPT = 20000


class Z3Backend(Backend):
    name = "z3"
    in_worker = True

    def __init__(self, mbqi: bool = True):
        import z3

        self._z3 = z3
        self.mbqi = mbqi
        self.ctx = z3.Context()
        self._shared: _Incremental | None = None

    @classmethod
    def unavailable(cls) -> str | None:
        import importlib.util

        return None if importlib.util.find_spec("z3") else "the z3-solver package is not installed"

    def check(self, check: Check, signature: "Signature", timeout_ms: int) -> Verdict:
        """One check on a fresh solver (`session` is what the pool uses)."""
        return _Incremental(self, timeout_ms).check(check, signature)

    def session(self, signature: "Signature", timeout_ms: int) -> Callable[[Check], Verdict]:
        shared = self._shared
        if shared is None or shared.used >= CHECKS_PER_SOLVER or shared.timeout_ms != timeout_ms:
            shared = self._shared = _Incremental(self, timeout_ms)
        return lambda check: shared.check(check, signature)

    def close(self) -> None:
        self._shared = None

    # ------------------------------------------------------------------ helpers
    def _solver(self, timeout_ms: int):
        solver = self._z3.Solver(ctx=self.ctx)
        solver.set("timeout", int(timeout_ms))
        solver.set("mbqi", self.mbqi)
        # Z3's automatic configuration (tuned for large benchmarks) roughly doubles the time of
        # our small checks; verdicts are the same (sat/unsat stay sound either way).
        solver.set("auto_config", False)
        return solver

    def _answer(self, solver, result, start: float) -> Verdict:
        z3 = self._z3
        ms = (time.perf_counter() - start) * 1000.0
        if result == z3.unsat:
            return Verdict(Status.VALID, self.name, ms, "unsat: premises ∧ ¬conclusion has no model")
        if result == z3.sat:
            return Verdict(Status.INVALID, self.name, ms, "sat: countermodel found")
        reason = solver.reason_unknown()
        if reason in ("canceled", "timeout"):  # Z3 says "canceled" when its timeout fires
            reason = f"timeout after {ms:.0f} ms"
        return unknown(f"z3: {reason}", self.name, ms)


class _Incremental:
    """One solver: symbols declared once, one push/pop scope per check."""

    def __init__(self, backend: Z3Backend, timeout_ms: int):
        self.backend = backend
        self.timeout_ms = timeout_ms
        self.texts: dict = {}  # Formula -> SMT-LIB term (independent of the solver)
        self.used = 0
        self._fresh_solver()

    def _fresh_solver(self) -> None:
        self.solver = self.backend._solver(self.timeout_ms)
        self.declared: dict[str, object] = {}  # mangled name -> Symbol

    def _declare(self, signature: "Signature") -> None:
        """Declare the signature's new symbols, outside any scope so they stay declared. A name
        already declared at another arity (`Q` as a proposition before, `Q x` now) would make
        Z3's parser reject the name as ambiguous: such a check gets a fresh solver."""
        from prosfi.logic.render_z3 import DOMAIN_SORT, mangle

        new = []
        for symbol in signature.key:
            name = mangle(symbol)
            seen = self.declared.get(name)
            if seen is None:
                new.append((name, symbol))
            elif seen != symbol:
                self._fresh_solver()
                return self._declare(signature)
        if not new and self.declared:
            return
        out = [] if self.declared else [f"(declare-sort {DOMAIN_SORT} 0)"]
        for name, symbol in new:
            result = "Bool" if symbol.role == "pred" else DOMAIN_SORT
            args = " ".join([DOMAIN_SORT] * symbol.arity)
            out.append(f"(declare-fun |{name}| ({args}) {result})")
        self.solver.from_string("".join(out))
        self.declared.update(new)
        self.declared.setdefault("", None)  # the sort is declared now, even with no symbols

    def _text(self, f, signature: "Signature") -> str:
        t = self.texts.get(f)
        if t is None:
            from prosfi.logic.render_z3 import smtlib_formula

            if len(self.texts) >= TEXTS_KEPT:
                self.texts.clear()
            t = self.texts[f] = smtlib_formula(f, signature)
        return t

    def check(self, check: Check, signature: "Signature") -> Verdict:
        start = time.perf_counter()
        self.used += 1
        self._declare(signature)
        body = "".join(f"(assert {self._text(f, signature)})" for _, f in check.premises)
        body += f"(assert (not {self._text(check.conclusion, signature)}))"
        self.solver.push()
        try:
            self.solver.from_string(body)
            result = self.solver.check()
            return self.backend._answer(self.solver, result, start)
        finally:
            self.solver.pop()


__all__ = ["Z3Backend"]
