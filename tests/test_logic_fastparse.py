"""The fast path and the Lark grammar build the same raw tree; the fast path never answers alone
for input Lark would refuse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_logic_printer import formulas  # the well-scoped AST strategy

from prosfi.logic import FormulaError, parse, pretty
from prosfi.logic.fastparse import MAX_NESTING, Fallback, parse_raw
from prosfi.logic.parser import _parse_with_lark

_TOKENS = ["A", "B", "P", "x", "y", "a", "f", "T", "∀", "∃", "forall", "exists", ",", "(", ")", ":", "¬",
           "∧", "∨", "→", "↔", "->", "<->", "/\\", "\\/", "=", "≠", "Xor'", "Not", "True", "sorry", "Xor",
           "#", ".", "\n", "∀ x,", "∃ (x y : T),", "(x : T)", "P x", "f x = a", "x'", "α₁"]


def _both(text: str):
    try:
        fast = parse_raw(text)
    except Fallback:
        fast = None
    try:
        slow = _parse_with_lark(text)
    except FormulaError:
        slow = None
    return fast, slow


def _nesting(text: str) -> int:
    return text.count("(") + text.count("∀") + text.count("∃") + text.count("forall") + text.count("exists")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=16), st.booleans())
def test_fast_path_agrees_with_the_grammar(tokens, spaced):
    text = (" " if spaced else "").join(tokens)
    fast, slow = _both(text)
    if fast is not None:
        assert fast == slow, text  # never accept what Lark refuses, never build another tree
    elif slow is not None:
        assert _nesting(text) >= MAX_NESTING, text  # declines only for deep nesting


def test_fast_path_on_realistic_formulas():
    texts = [
        "∀ x, Kind x ∧ Smart x → Nice x ∨ ¬ Happy x",
        "Knight zoey ↔ ¬ Knight oliver ∧ (Knave oliver ∨ Knight zoey)",
        "∀ (x y : Person), Likes x y → ∃ z : Person, Likes z x ∧ z ≠ y",
        "forall x, P x -> Q x /\\ R x \\/ ~S x".replace("~", "¬"),
        "Xor' (P a) (Not (Q (f a b)))",
        "¬¬¬¬P a",
        "A ∧\n  B",
    ]
    for text in texts:
        fast, slow = _both(text)
        assert fast is not None and fast == slow, text


def test_deep_input_falls_back_to_lark():
    text = "(" * 100 + "A" + ")" * 100
    try:
        parse_raw(text)
        raise AssertionError("the fast path should decline")
    except Fallback:
        pass
    assert pretty(parse(text)) == "A"


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_fast_path_agrees_on_printed_formulas(f):
    text = pretty(f)
    fast, slow = _both(text)
    assert slow is not None and (fast == slow or (fast is None and _nesting(text) >= MAX_NESTING)), text


def _two_step(text: str, max_depth: int = 350):
    """What the parser built before the direct path: parse_raw (or Lark), then parser._formula."""
    from prosfi.logic.parser import _formula

    try:
        try:
            raw = parse_raw(text)
        except Fallback:
            raw = _parse_with_lark(text)
        if raw[1] > max_depth:
            return "too deep"
        return _formula(raw, frozenset())
    except FormulaError:
        return None


def _direct(text: str, max_depth: int = 350):
    from prosfi.logic.fastparse import parse_ast

    try:
        return parse_ast(text, max_depth)
    except Fallback:
        return "fallback"


_AST_TOKENS = _TOKENS + ["P x y", "f a", "(f a)", "x = y", "a ≠ b", "P (f a)", "Q a", "∀ y,", "∃ x,", "P a ∧"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_AST_TOKENS), min_size=1, max_size=18), st.booleans())
def test_direct_path_builds_the_same_ast_or_declines(tokens, spaced):
    text = (" " if spaced else "").join(tokens)
    direct = _direct(text)
    if direct != "fallback":  # it never accepts what the two-step path refuses, never builds another AST
        assert direct == _two_step(text), text
        assert parse(text) == direct


@settings(max_examples=300, deadline=None)
@given(formulas())
def test_direct_path_on_printed_formulas(f):
    text = pretty(f)
    direct = _direct(text)
    assert direct == "fallback" or direct == _two_step(text) == f, text


def test_direct_path_answers_the_common_shapes_and_respects_max_depth():
    for text in ["∀ x, Kind x ∧ Smart x → Nice x ∨ ¬ Happy x", "∀ (x y : Person), Likes x y → ∃ z, Likes z x ∧ z ≠ y",
                 "∀ x y z, R x y ∧ R y z → R x z", "P (f a) b = c → Q", "a = b", "¬¬P a", "∃ x, ∀ y, R x y"]:
        assert _direct(text) not in ("fallback", None) and _direct(text) == _two_step(text), text
    for text in ["True ∧ P a", "Xor' (P a) (Q b)", "∀ x, x", "∀ x, P (x y)", "P (Q a ∧ R b)", "(f a) = b"]:
        assert _direct(text) == "fallback", text  # the two-step path decides these
    deep = "¬ " * 40 + "P a"
    assert _direct(deep, max_depth=20) == "fallback" and _two_step(deep, max_depth=20) == "too deep"


# ---------------------------------------------------------------- the symbols read on the way
def _symbols_agree(text: str) -> bool | None:
    """None when the direct path declines; else whether its symbols give what check_signature does
    on the same AST (both the Signature, or both a clash)."""
    from prosfi.logic import SignatureError, check_signature
    from prosfi.logic.fastparse import parse_ast, parse_ast_symbols
    from prosfi.logic.signature import from_symbols

    try:
        node, symbols = parse_ast_symbols(text, 350)
    except Fallback:
        return None
    assert node == parse_ast(text, 350)
    try:
        want = check_signature([node])
    except SignatureError:
        return symbols is None
    return symbols is not None and from_symbols(symbols) == want


_CLASH_TOKENS = _AST_TOKENS + ["P", "P a b", "f", "(f a b)", "a a", "Q (f a)", "f = a"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_CLASH_TOKENS), min_size=1, max_size=14), st.booleans())
def test_direct_path_symbols_are_the_signature(tokens, spaced):
    """The verifier takes the signature from the symbols the direct path read (no second walk):
    the same Signature as check_signature on its AST, and a clash exactly when that raises."""
    assert _symbols_agree((" " if spaced else "").join(tokens)) is not False


def test_direct_path_symbols_on_common_shapes_and_clashes():
    for text in ["∀ x, Kind x ∧ Smart x → Nice x ∨ ¬ Happy x", "∀ x y z, R x y ∧ R y z → R x z",
                 "P (f a) b = c → Q", "a = b", "∃ x, ∀ y, R x y"]:
        assert _symbols_agree(text) is True, text
    for text in ["P a ∧ P a b", "P a ∧ Q P", "f a = b ∧ P f", "P (f a) ∧ P (f a b)"]:  # clashes
        assert _symbols_agree(text) is True, text
