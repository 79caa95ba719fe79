"""PRM dataset shaping: dedupe, balancing and split-by-problem invariants (issue #14)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.prm import dataset as ds


def _record(pid: str, labels: list[bool], tag: str = "") -> dict:
    steps = [{"id": f"s{i + 1}", "dependencies": ["h1"], "conclusion": f"P{tag}{i} a", "rule": ""}
             for i in range(len(labels))]
    return {"prompt": f"problem {pid}", "problem_id": pid, "labels": list(labels), "steps": steps,
            "completions": [str(s) for s in steps], "verdicts": ["valid" if x else "invalid" for x in labels],
            "positions": list(range(len(labels))),
            "first_error": next((i for i, x in enumerate(labels) if not x), None)}


records_st = st.lists(
    st.tuples(st.integers(0, 6), st.lists(st.booleans(), min_size=1, max_size=6), st.integers(0, 3)),
    min_size=1, max_size=30,
).map(lambda xs: [_record(f"p{pid}", labels, f"t{j}{tag}") for j, (pid, labels, tag) in enumerate(xs)])


@settings(max_examples=200, deadline=None)
@given(records_st, st.floats(0.1, 0.9), st.booleans(), st.integers(0, 5))
def test_balancing_keeps_verifier_labels_and_moves_towards_the_target(records, target, truncate, seed):
    out = ds.balance(records, target, truncate=truncate, seed=seed)
    for r in out:  # every kept chain is an original, or one cut right after its first error
        src = next(o for o in records if o["problem_id"] == r["problem_id"]
                   and o["completions"][: len(r["completions"])] == r["completions"])
        assert r["labels"] == src["labels"][: len(r["labels"])]
        if len(r["labels"]) < len(src["labels"]):
            assert truncate and src["first_error"] is not None and len(r["labels"]) == src["first_error"] + 1
    before = abs(ds.correct_fraction(records) - target)
    assert abs(ds.correct_fraction(out) - target) <= before + 1e-9
    assert out  # never everything dropped


def test_balancing_reaches_fifty_fifty_when_chains_allow_it():
    records = [_record("a", [True] * 4), _record("b", [True, False, True, True]), _record("c", [False]),
               _record("d", [True, True]), _record("e", [False, False]), _record("f", [False])]
    out = ds.balance(records, 0.5, truncate=True)
    c, i = ds.counts(out)
    assert c == i == 5  # b cut after its error (7 correct : 5), then one two-step correct chain dropped
    assert all(r["labels"][-1] is False or r["first_error"] is None for r in out if r.get("truncated"))


@settings(max_examples=200, deadline=None)
@given(records_st, st.floats(0.0, 0.9), st.integers(0, 5))
def test_split_never_puts_a_problem_on_both_sides(records, fraction, seed):
    train, val = ds.split_by_problem(records, fraction, seed)
    assert not {r["problem_id"] for r in train} & {r["problem_id"] for r in val}
    assert len(train) + len(val) == len(records)
    if fraction > 0 and len({r["problem_id"] for r in records}) >= 2:
        assert val


def test_dedupe_drops_identical_chains_and_identical_training_examples():
    a, b = _record("p", [True, False]), _record("p", [True, False])
    other = _record("q", [True, False])
    assert ds.dedupe_records([a, b, other]) == [a, other]
    longer = _record("p", [True, False, True])  # shares its first two steps with `a`
    examples = list(ds.step_examples([a, longer]))
    assert [(r is longer, k) for r, k in examples] == [(False, 0), (False, 1), (True, 2)]
    assert len(ds.sft_rows([a, longer])) == 3 and len(ds.sft_rows([a, longer], dedupe=False)) == 5


def test_sft_rows_are_conversational_prompt_completion_pairs():
    row = ds.sft_rows([_record("p", [True, False])])[1]
    assert row["prompt"][0]["role"] == "user" and "Last step:" in row["prompt"][0]["content"]
    assert "P0 a" in row["prompt"][0]["content"]  # the step before it, in "Steps so far"
    assert row["completion"] == [{"role": "assistant", "content": "incorrect"}]


def test_balancing_drops_nothing_when_no_drop_helps():
    records = [_record("a", [False]), _record("b", [False, False]), _record("c", [False])]
    assert ds.balance(records, 0.5) == records
