"""Errors of the formula language: a formula that cannot be read, or symbols that do not agree."""

from __future__ import annotations


class FormulaError(ValueError):
    """Text that is not a formula of prosfi's Lean 4 fragment; the message says what and where."""


class SignatureError(FormulaError):
    """One symbol used at two arities or in two roles within one check; the message names it."""

    def __init__(self, message: str, symbol: str | None = None):
        super().__init__(message)
        self.symbol = symbol
