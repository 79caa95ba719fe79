"""Admit only a plain tactic proof from a model into a Lean theorem (the direct-Lean baseline).

The statement is ours (rendered from the AST); the model supplies only the text after `by`.
That text is the one place where model text reaches Lean verbatim, so it passes four gates:

1. characters: printable ASCII, a fixed set of Lean's mathematical symbols and the non-ASCII
   characters of our own statement; nothing else (no lookalikes, zero-width or bidi controls),
   no string or name literals (`"`, backtick), no `«…»` name that our statement does not use;
2. comments: `--` line comments are stripped (as Lean would); block comments `/- … -/` are
   refused (they nest, and text hidden in them is never needed in a proof);
3. a token denylist: commands and everything that escapes a tactic proof or the kernel
   (`sorry`, `admit`, `axiom`, `import`, any `#` command, `set_option`, `open`, attributes `@[`,
   `macro`/`elab`/`syntax`/`notation`, `unsafe`, `implemented_by`, `extern`, `native_decide`,
   `decreasing_by`, `termination_by`, `run_tac`, `Lean.*`, `where`, `def`/`theorem`/…, the
   core axioms `sorryAx`/`lcProof`, search tactics such as `exact?`);
4. an allowlist of tactic names for every tactic head we can locate (line starts at the block's
   indentation, after `·`/`case … =>`/`next =>`, after `;`, `<;>` and `by`).

Search tactics (`exact?`, `apply?`, `simp?`, `aesop?`, `hint`) are refused: they print
suggestions rather than prove, and would turn the checking pool into a search service.
After Lean accepts the theorem, the caller still checks `#print axioms` (see `render.py`).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

# Lean's mathematical notation that a first-order tactic proof may need.
ALLOWED_SYMBOLS = frozenset("¬∧∨→↔∀∃⟨⟩≠←↦⊢λ▸·∘×≤≥⁻¹₁₂₃₄₅₆₇₈₉₀")

DENIED_WORDS = frozenset("""
    sorry admit stop sorryAx lcProof lcUnreachable axiom axioms import set_option open export
    namespace section end variable variables universe universes instance def theorem lemma
    example abbrev opaque structure class inductive coinductive mutual deriving where private
    protected noncomputable partial unsafe macro macro_rules syntax notation infix infixl infixr
    prefix postfix attribute local scoped implemented_by extern csimp native_decide
    decreasing_by termination_by run_tac run_cmd run_elab run_meta by_elab elab elab_rules
    initialize builtin_initialize omit include trustCompiler ofReduceBool ofReduceNat dbg_trace
    dbgTrace hint library_search bv_decide bv_omega bv_normalize declare_syntax_cat simproc
    dsimproc alias grind_pattern add_aesop_rules declare_aesop_rule_sets seal unseal
    register_simp_attr add_decl_doc gen_injective_theorems declare_simp_like_tactic nonrec
    compile_inductive
""".split())  # noqa: SIM905 - a word list reads best as text
# Substrings that are refused inside any identifier (case-insensitive).
DENIED_SUBSTRINGS = ("unsafe", "native", "elab", "reducebool", "sorry", "axiom", "implemented", "extern")
DENIED_PREFIXES = ("Lean.", "IO.", "System.")

# Core Lean, Batteries and Aesop tactics (what `import Aesop` provides).
ALLOWED_TACTICS = frozenset("""
    intro intros rintro exact exacts apply refine refine' constructor left right exists use
    cases rcases obtain induction match have show suffices let calc simp simp_all simp_arith
    dsimp simpa aesop grind omega decide trivial rfl assumption contradiction exfalso absurd
    by_contra by_cases split specialize unfold rw rewrite rwa erw subst subst_vars injection
    apply_assumption next case all_goals any_goals first try repeat focus skip done iterate
    generalize change revert clear rename_i rename classical and_intros symm trans congr ac_rfl
    funext ext nofun nomatch fail solve_by_elim apply_rules
""".split())  # noqa: SIM905 - a word list reads best as text

_IDENT = re.compile(r"[^\W\d][\w'!?.]*|\d[\w.]*", re.UNICODE)
_HEAD_PREFIX = re.compile(r"^\s*(?:[·.]\s*|\(\s*|case\s+[^=]*=>\s*|next\s+[^=]*=>\s*)")
_GUILLEMET = re.compile(r"«[^»]*»")


@dataclass(frozen=True)
class SanitizedProof:
    """`body` (the proof to place after `by`, dedented) when accepted, else None and a reason."""

    body: str | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.body is not None


def _reject(reason: str) -> SanitizedProof:
    return SanitizedProof(None, reason)


def sanitize_proof(text: str, statement: str = "", max_chars: int = 8000) -> SanitizedProof:
    """Accept `text` as a tactic proof body or say why not. `statement` is our rendered theorem
    statement: its identifiers and non-ASCII characters are allowed in the proof."""
    if not isinstance(text, str):
        return _reject("the proof is not text")
    if len(text) > max_chars:
        return _reject(f"the proof is longer than {max_chars} characters")
    text = text.replace("\r\n", "\n").replace("\t", "    ")
    statement_chars = frozenset(c for c in statement if ord(c) > 127)
    for ch in text:
        if ch == "\n" or " " <= ch <= "~":
            continue
        if ch in ALLOWED_SYMBOLS or ch in statement_chars:
            continue
        return _reject(f"character U+{ord(ch):04X} is not allowed in a proof")
    if "/-" in text or "-/" in text:
        return _reject("block comments (/- … -/) are not allowed")
    if '"' in text or "`" in text:
        return _reject("string and name literals are not allowed")
    text = "\n".join(line.split("--", 1)[0].rstrip() for line in text.split("\n"))
    for name in _GUILLEMET.findall(text):
        if name not in statement:
            return _reject(f"the escaped name {name} is not one of the statement's names")
    unescaped = _GUILLEMET.sub(" ", text)
    if "«" in unescaped or "»" in unescaped:
        return _reject("unbalanced « »")
    if "#" in text:
        return _reject("commands (#…) are not allowed")
    if "@[" in text:
        return _reject("attributes (@[…]) are not allowed")
    ours = frozenset(_IDENT.findall(statement)) - DENIED_WORDS
    for token in _IDENT.findall(unescaped):
        reason = "" if token.rstrip(".") in ours else _denied(token)
        if reason:
            return _reject(reason)
    body = textwrap.dedent(text).strip("\n")
    if not body.strip():
        return _reject("the proof is empty")
    for head in _tactic_heads(body):
        if head not in ALLOWED_TACTICS:
            return _reject(f"tactic {head!r} is not in the allowed list")
    return SanitizedProof(body)


def _denied(token: str) -> str:
    bare = token.rstrip(".")
    if bare in DENIED_WORDS:
        return f"{bare!r} is not allowed in a proof"
    if bare.endswith("?"):
        return f"search tactics ({bare}) are not allowed"
    low = bare.lower()
    for part in DENIED_SUBSTRINGS:
        if part in low:
            return f"{bare!r} is not allowed in a proof (contains {part!r})"
    rooted = bare.removeprefix("_root_.")  # `_root_.IO.Process.exit` names the same thing
    for prefix in DENIED_PREFIXES:
        if rooted.startswith(prefix) or rooted == prefix.rstrip("."):
            return f"{bare!r} is not allowed in a proof"
    for piece in bare.split("."):  # `Foo.sorryAx`, `x.axiom`
        if piece in DENIED_WORDS:
            return f"{bare!r} is not allowed in a proof"
    return ""


def _tactic_heads(body: str) -> list[str]:
    """The first word of each tactic we can locate without a Lean parser."""
    heads: list[str] = []
    prev = ""
    for line in body.split("\n"):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        starts_tactic = indent == 0 or prev.rstrip().endswith("by") or line.lstrip().startswith(("·", "case ", "next "))
        segments = re.split(r"<;>|;|\bby\b", line)
        for i, segment in enumerate(segments):
            if i == 0 and not starts_tactic:
                continue
            words = _IDENT.findall(_HEAD_PREFIX.sub("", segment))
            if words and segment.strip():
                stripped = _HEAD_PREFIX.sub("", segment).lstrip()
                if stripped[:1].isalpha() or stripped[:1] == "_":
                    heads.append(words[0])
        prev = line
    return heads


__all__ = ["ALLOWED_TACTICS", "DENIED_WORDS", "SanitizedProof", "sanitize_proof"]
