"""Names that are not identifiers of the formula language, and names with a fixed meaning.

Lean keywords are refused by the parser (model text must never smuggle a command into a prover)
and escaped by the Lean renderer. Connective names (`Not`, `Xor'`, …) are Lean's own functions and
keep their logical meaning; they can be neither bound nor used as symbols.
"""

from __future__ import annotations

# Lean 4 keywords and command words (tokens of core's grammar that match the identifier shape).
LEAN_KEYWORDS = frozenset([
    "fun", "λ", "let", "have", "show", "from", "by", "do", "then", "else", "if", "match", "with", "at",
    "in", "theorem", "lemma", "axiom", "axioms", "def", "example", "instance", "structure", "class",
    "inductive", "coinductive", "where", "import", "open", "namespace", "section", "end", "variable",
    "variables", "universe", "universes", "sorry", "admit", "Type", "Prop", "Sort", "calc", "suffices",
    "obtain", "using", "deriving", "mutual", "private", "protected", "noncomputable", "partial",
    "unsafe", "macro", "macro_rules", "syntax", "notation", "infix", "infixl", "infixr", "prefix",
    "postfix", "attribute", "local", "scoped", "set_option", "return", "for", "unless", "mut", "try",
    "catch", "finally", "break", "continue", "nomatch", "nofun", "termination_by", "decreasing_by",
    "opaque", "abbrev", "extends", "export", "initialize", "builtin_initialize", "omit", "include",
    "elab", "elab_rules", "forall", "exists", "nonrec", "public", "meta", "this", "Exists", "Forall",
    "_",
])
# `Exists`/`Forall` are functions, but only useful with `fun`; `this` is a term keyword.

# Lean functions that the parser reads as connectives, with their argument counts.
CONNECTIVES = {"True": 0, "False": 0, "Not": 1, "Xor'": 2, "And": 2, "Or": 2, "Iff": 2, "Eq": 2, "Ne": 2}

# Names that look like a connective but are not one in Lean core (`Xor` is the `^^^` class).
LOOKALIKES = {"Xor": "Xor'", "xor": "Xor'", "Implies": "→", "iff": "Iff", "not": "Not", "true": "True",
              "false": "False"}

RESERVED = LEAN_KEYWORDS | CONNECTIVES.keys() | LOOKALIKES.keys()
