"""Signatures: one role and one arity per symbol across a check."""

from __future__ import annotations

import pytest

from prosfi.logic import FormulaError, Signature, SignatureError, Symbol, check_signature, parse


def sig(*texts: str, base: Signature | None = None) -> Signature:
    return check_signature([parse(t) for t in texts], base)


def test_collects_every_symbol_with_role_and_arity():
    s = sig("∀ x, Kind x → R x (f x bob)", "A ∨ g bob = alice")
    assert dict(s) == {
        "Kind": Symbol("Kind", "pred", 1), "R": Symbol("R", "pred", 2), "f": Symbol("f", "func", 2),
        "bob": Symbol("bob", "const", 0), "A": Symbol("A", "pred", 0), "g": Symbol("g", "func", 1),
        "alice": Symbol("alice", "const", 0),
    }
    assert "x" not in s  # bound variables are not symbols


@pytest.mark.parametrize("texts, symbol, words", [
    (["P a", "P a b"], "P", ["arity 1", "arity 2"]),
    (["P a", "Q P"], "P", ["predicate", "constant"]),
    (["A", "P A"], "A", ["proposition", "constant"]),
    (["P (f a)", "f = a"], "f", ["function", "constant"]),
    (["P (f a)", "f a"], "f", ["function", "predicate"]),
    (["P (f a)", "P (f a b)"], "f", ["arity 1", "arity 2"]),
    (["∀ x, P x", "P x x"], "P", ["arity 1", "arity 2"]),
])
def test_clash_names_the_symbol(texts, symbol, words):
    with pytest.raises(SignatureError) as info:
        sig(*texts)
    assert info.value.symbol == symbol
    assert f"`{symbol}`" in str(info.value)
    assert all(w in str(info.value) for w in words)
    assert isinstance(info.value, FormulaError)


def test_bound_name_and_constant_of_the_same_name_do_not_clash():
    s = sig("∀ x, P x", "P x")
    assert s["x"] == Symbol("x", "const", 0)


def test_base_signature_is_extended_and_checked():
    base = sig("Kind bob")
    extended = sig("Nice bob", base=base)
    assert set(extended) == {"Kind", "Nice", "bob"}
    assert sig("Kind bob", base=base) is base
    with pytest.raises(SignatureError, match="Kind"):
        sig("Kind bob alice", base=base)


def test_signature_is_immutable_hashable_and_keyed_by_content():
    s1, s2 = sig("P a", "Q b"), sig("Q b ∧ P a")
    assert s1 == s2 and hash(s1) == hash(s2) and s1.key == s2.key
    assert {s1: 1}[s2] == 1
    assert s1 != sig("P a")
    with pytest.raises(TypeError):
        s1["R"] = Symbol("R", "pred", 0)  # type: ignore[index]
    assert [s.name for s in s1.of_role("pred")] == ["P", "Q"]
