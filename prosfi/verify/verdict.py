"""Entailment and Verdict live in `prosfi.verdict` (below every layer, so `prosfi.quant` can answer
with the same Verdict); this module keeps the old import path."""

from prosfi.verdict import Entailment, Status, Verdict, error, unknown

__all__ = ["Status", "Entailment", "Verdict", "error", "unknown"]
