"""The direct-Lean sanitiser: injection attempts are refused, plain tactic proofs pass."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from prosfi.verify.lean.sanitize import ALLOWED_TACTICS, DENIED_WORDS, sanitize_proof

STATEMENT = ("theorem prosfi_direct (U : Type) [Nonempty U] (Kind : U → Prop) (Nice : U → Prop) (candy : U)\n"
             "    (h1 : ∀ (x : U), Kind x → Nice x) (h2 : Kind candy) («end» : Prop) :\n    Nice candy")

INJECTIONS = {
    "sorry": "sorry",
    "admit": "admit",
    "stop": "intro h\nstop",
    "sorryAx": "exact sorryAx _ false",
    "qualified sorryAx": "exact (Foo.sorryAx _)",
    "lcProof": "exact lcProof",
    "axiom": "axiom cheat : False\nexact cheat.elim",
    "import": "import Mathlib",
    "#eval": "#eval IO.println 1",
    "#exit": "simp\n#exit",
    "#print": "#print axioms prosfi_direct",
    "set_option": "set_option maxHeartbeats 0 in\naesop",
    "open in": "open Classical in\nexact h1 candy h2",
    "namespace": "exact h1 candy h2\nnamespace Foo",
    "section": "section\nexact h1 candy h2",
    "end at line start": "exact h1 candy h2\nend",
    "variable": "variable (p : Prop)",
    "universe": "universe u",
    "instance": "instance : Inhabited U := ⟨candy⟩",
    "def": "exact h1 candy h2\ndef x := 1",
    "theorem": "exact h1 candy h2\ntheorem cheat : False := by simp",
    "lemma": "lemma cheat : False := by simp",
    "example": "example : True := trivial",
    "macro": "macro \"cheat\" : tactic => `(tactic| sorry)",
    "macro_rules": "macro_rules | `(tactic| trivial) => `(tactic| sorry)",
    "syntax": "syntax \"cheat\" : tactic",
    "elab": "elab \"cheat\" : tactic => pure ()",
    "by_elab": "exact by_elab pure default",
    "notation": "notation \"ok\" => sorry",
    "unsafe": "exact unsafe (cast rfl ())",
    "unsafeCast": "exact unsafeCast ()",
    "implemented_by": "@[implemented_by foo] def x := 1",
    "extern": "@[extern \"c\"] opaque f : Nat",
    "attribute": "attribute [simp] h1 in simp_all",
    "attribute brackets": "@[simp] theorem t : True := trivial",
    "native_decide": "native_decide",
    "decide +native": "decide +native",
    "decreasing_by": "exact h1 candy h2\ndecreasing_by sorry",
    "termination_by": "exact h1 candy h2\ntermination_by 0",
    "run_tac": "run_tac pure ()",
    "run_cmd": "run_cmd pure ()",
    "Lean.Elab": "exact Lean.Elab.Term.elabTerm",
    "Lean.ofReduceBool": "exact Lean.ofReduceBool _ _ rfl",
    "trustCompiler": "exact trustCompiler",
    "where clause": "exact aux\nwhere aux : Nice candy := h1 candy h2",
    "block comment hiding text": "/- sorry -/ exact h1 candy h2",
    "unterminated block comment": "exact h1 candy h2 /-",
    "nested comment closer": "exact h1 candy h2 -/",
    "exact?": "exact?",
    "apply?": "apply?",
    "simp?": "simp?",
    "aesop?": "aesop?",
    "hint": "hint",
    "bv_decide": "bv_decide",
    "string literal": "exact (\"x\" : String).length",
    "name literal": "exact `foo",
    "guillemet escape": "exact «sorryAx» _ false",
    "cyrillic lookalike": "ѕorry",
    "fullwidth": "ｓｏｒｒｙ",
    "zero-width joiner": "so\u200drry",
    "bidi override": "exact h1 candy h2 \u202e",
    "control character": "simp\x00",
    "unknown tactic head": "cheat_tactic",
    "mathlib tauto": "tauto",
    "empty": "   \n  ",
    "too long": "simp\n" * 5000,
    "IO": "exact (IO.println \"x\")",
}

LEGITIMATE = [
    "exact h1 candy h2",
    "apply h1\nexact h2",
    "simp_all",
    "aesop",
    "grind",
    "intro h\nexact h",
    "have h3 : Nice candy := h1 candy h2\nexact h3",
    "have h3 : Nice candy := by\n  apply h1\n  exact h2\nexact h3",
    "  exact h1 _ h2  ",
    "exact h1 candy h2 -- modus ponens",
    "constructor\n· exact h2\n· simp_all",
    "by_cases hc : Kind candy\n· exact h1 _ hc\n· exact absurd h2 hc",
    "rcases h1 candy with h | h <;> simp_all",
    "first | simp_all | aesop",
    "refine h1 _ ?_\nexact h2",
    "exact (h1 candy) h2",
    "exact fun _ => h1 candy h2",
    "obtain ⟨x, hx⟩ : ∃ x, Kind x := ⟨candy, h2⟩\nexact h1 candy h2",
    "cases h1 candy h2 with\n| _ => trivial",
    "apply Classical.byContradiction\nintro hn\nexact hn (h1 candy h2)",
    "exact «end».elim",
    "simp only [h2, h1]",
    "exact (h1 candy h2 : Nice candy)",
    "decide",
    "omega",
]


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_injection_attempts_are_refused(name):
    result = sanitize_proof(INJECTIONS[name], STATEMENT)
    assert not result.ok, f"{name!r} passed the sanitiser: {result.body!r}"
    assert result.reason


@pytest.mark.parametrize("proof", LEGITIMATE)
def test_plain_tactic_proofs_pass(proof):
    result = sanitize_proof(proof, STATEMENT)
    assert result.ok, f"{proof!r} refused: {result.reason}"
    assert "--" not in result.body and result.body == result.body.strip("\n")


def test_line_comments_are_stripped_not_passed_on():
    result = sanitize_proof("exact h1 candy h2 -- sorry, #eval, set_option", STATEMENT)
    assert result.ok and result.body == "exact h1 candy h2"


def test_proof_is_dedented_for_placement_under_by():
    result = sanitize_proof("    intro h\n    · exact h", STATEMENT)
    assert result.body == "intro h\n· exact h"


def test_statement_names_are_allowed_but_statement_keywords_are_not():
    # `theorem` occurs in the statement, yet stays forbidden in the proof
    assert not sanitize_proof("exact theorem", STATEMENT).ok
    assert sanitize_proof("exact «end».elim", STATEMENT).ok
    assert not sanitize_proof("exact «other».elim", STATEMENT).ok


def test_tactic_allowlist_excludes_every_denied_word():
    assert not (ALLOWED_TACTICS & DENIED_WORDS)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.sampled_from(sorted(DENIED_WORDS)))
@example("-", "abbrev")
def test_a_denied_word_anywhere_as_a_token_is_refused(prefix, word):
    assume("--" not in prefix)  # after `--` the word is a comment, which is stripped, not passed on
    text = f"simp\n{prefix.replace(chr(10), ' ')} {word} x"
    assert not sanitize_proof(text, STATEMENT).ok


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_sanitiser_never_raises_and_accepted_text_has_no_commands(text):
    result = sanitize_proof(text, STATEMENT)
    if result.ok:
        assert "#" not in result.body and "sorry" not in result.body.lower() and "/-" not in result.body


def test_root_qualified_names_do_not_bypass_the_denied_prefixes():
    from prosfi.verify.lean.sanitize import sanitize_proof

    assert not sanitize_proof("exact _root_.IO.Process.exit 0").ok
    assert not sanitize_proof("exact _root_.Lean.ofReduceBool").ok


@pytest.mark.parametrize("tactics", ["native_decide", "simp_all|decide +native", "sorry", "exact?"])
def test_configured_step_tactics_go_through_the_sanitiser(tactics):
    from prosfi.verify.lean.config import LeanConfig

    with pytest.raises(ValueError, match="LeanConfig.tactics"):
        LeanConfig(tactics=tactics)
    assert LeanConfig(tactics="simp_all|aesop").tactics == ("simp_all", "aesop")
