"""The formula walkers the gold derivations, perturbations and chain guards share (`prosfi.logic.syntax`)."""

from prosfi.logic import parse, pretty
from prosfi.logic.relevance import goal_constants, nothing_bears, relevant_premises
from prosfi.logic.syntax import constants, has_forall, predicates, rename_free, substitute, variable_free


def test_substitute_replaces_free_occurrences_only():
    f = parse("∀ x, P x → (∃ y, R x y) ∧ (∀ y, Q y)").body
    assert pretty(substitute(f, "x", "a")) == pretty(parse("P a → (∃ y, R a y) ∧ (∀ y, Q y)"))
    assert substitute(f, "y", "a") == f  # every y is bound


def test_rename_free_keeps_bound_names():
    f = parse("∃ y, P y ∧ Q y").body
    assert pretty(rename_free(f, "y", "z")) == pretty(parse("P z ∧ Q z"))


def test_variable_free_means_a_truth_table_decides_it():
    assert variable_free(parse("P a ∧ ¬ (Q a b ∨ True)"))
    for text in ("∀ x, P x", "a = b", "P (f a)"):
        assert not variable_free(parse(text)), text


def test_constants_in_order_of_first_appearance_and_predicates():
    fs = [parse("R b a ∧ P c"), parse("∀ x, Q x a")]
    assert constants(fs) == ["b", "a", "c"]
    assert predicates(fs[0]) == {"R", "P"}
    assert has_forall(parse("¬ (∃ y, ∀ x, P x)")) and not has_forall(parse("∃ x, P x"))


def test_relevance_is_transitive_over_shared_predicates():
    premises = [("p1", "∀ x, A x → B x"), ("p2", "∀ x, B x → C x"), ("p3", "D tom"), ("p4", "A tom")]
    ids, preds = relevant_premises("C tom", premises)
    assert ids == {"p1", "p2", "p4"} and preds == {"A", "B", "C"}
    assert goal_constants("C tom") == {"tom"}
    assert not nothing_bears("C tom", premises)
    assert nothing_bears("C tom", [("p1", "∃ x, C x")])  # says nothing about tom
    assert nothing_bears("E tom", premises)
