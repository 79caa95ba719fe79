"""Trace extraction, step schema and answer reading: pure functions, no verifier."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.data.problem import Problem
from prosfi.trace import completion_text, extract_blocks, parse_steps, parse_trace, strip_fence
from prosfi.trace.answer import answer_correct, parse_answer

STEPS = [{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Nice candy", "rule": "modus_ponens"}]


def completion(steps=STEPS, answer="A", think="reasoning", steps_text=None, tail=""):
    body = json.dumps(steps, ensure_ascii=False) if steps_text is None else steps_text
    return f"<think>\n{think}\n</think>\n<steps>\n{body}\n</steps>\n<answer>{answer}</answer>{tail}"


def test_well_formed_completion_is_read():
    parsed = parse_trace(completion(), ["h1", "h2"])
    assert parsed.ok, parsed.reason
    (step,) = parsed.trace.steps
    assert step.id == "s1" and step.dependencies == ("h1", "h2") and step.conclusion == "Nice candy"
    assert step.rule == "modus_ponens"
    assert parsed.trace.answer == "A" and parsed.trace.think.strip() == "reasoning"


def test_code_fence_and_whitespace_inside_steps_are_tolerated():
    fenced = "  \n```json\n" + json.dumps(STEPS) + "\n```\n  "
    parsed = parse_trace(completion(steps_text=fenced))
    assert parsed.ok, parsed.reason
    assert parsed.trace.steps[0].conclusion == "Nice candy"


def test_missing_think_opener_is_tolerated_when_the_prompt_prefilled_it():
    text = completion().replace("<think>", "", 1)
    assert parse_trace(text).ok


def test_conversational_completion():
    msgs = [{"role": "assistant", "content": completion()}]
    assert completion_text(msgs) == completion()
    parts = [{"role": "assistant", "content": [{"type": "text", "text": completion()}]}]
    assert parse_trace(parts).ok


@pytest.mark.parametrize(
    "text, reason",
    [
        (completion(answer="A</answer><answer>B"), "2 <answer>"),
        (completion(think="I think <answer>B</answer> first"), "2 <answer>"),
        (completion(steps_text=json.dumps(STEPS) + "</steps><steps>[]"), "2 <steps>"),
        (completion(tail="\nActually, B."), "text after </answer>"),
        (completion(answer="   "), "empty <answer>"),
        ("<think>x</think><answer>A</answer>", "missing <steps>"),
        ("<think>x</think><steps>[]</steps>", "missing <answer>"),
        ("<think>x<steps>[]</steps><answer>A</answer>", "missing </think>"),
        ("<think>x</think><answer>A</answer><steps>[]</steps>", "out of order"),
        (completion(steps_text="[{'id': 's1'}]"), "not valid JSON"),
        (completion(steps_text='{"id": "s1"}'), "must be a JSON array"),
        (completion(steps=["s1"]), "must be an object"),
        (completion(steps=[{"dependencies": [], "conclusion": "A"}]), "'id'"),
        (completion(steps=[{"id": "s1", "dependencies": "h1", "conclusion": "A"}]), "'dependencies'"),
        (completion(steps=[{"id": "s1", "dependencies": ["h1"], "conclusion": ""}]), "'conclusion'"),
        (completion(steps=[{"id": "s1", "dependencies": ["h1"], "conclusion": "A", "rule": 3}]), "'rule'"),
        (completion(steps=[STEPS[0], STEPS[0]]), "duplicate id"),
        (completion(steps=[{**STEPS[0], "id": "h1"}]), "shadows a premise"),
        ("", "missing"),
    ],
)
def test_format_failures_have_reasons(text, reason):
    parsed = parse_trace(text, ["h1", "h2"])
    assert not parsed.ok
    assert reason in parsed.reason


def test_schema_reasons_are_capped():
    bad = [{"id": f"s{i}"} for i in range(10)]
    parsed = parse_trace(completion(steps=bad))
    assert not parsed.ok and "more" in parsed.reason


def test_empty_step_array_is_well_formed():
    parsed = parse_trace(completion(steps=[]))
    assert parsed.ok and parsed.trace.steps == ()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/thinkstepanswr[]{}\"' \n`json")), max_size=120))
def test_extraction_never_raises(text):
    result = parse_trace(text, ["h1"])
    assert result.ok or result.reason


@settings(max_examples=100, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "id": st.from_regex(r"s[0-9]{1,3}", fullmatch=True),
    "dependencies": st.lists(st.from_regex(r"[hs][0-9]", fullmatch=True), max_size=4),
    "conclusion": st.text(min_size=1, max_size=20).filter(str.strip),
    "rule": st.text(max_size=10),
}), max_size=6, unique_by=lambda d: d["id"]))
def test_round_trip_of_well_formed_step_arrays(steps):
    parsed, errors = parse_steps(json.dumps(steps))
    assert errors == []
    assert [s.id for s in parsed] == [d["id"] for d in steps]
    assert [s.conclusion for s in parsed] == [d["conclusion"].strip() for d in steps]


def test_strip_fence_only_strips_a_full_fence():
    assert strip_fence("```\n[1]\n```") == "[1]"
    assert strip_fence("```json [1]```") == "[1]"
    assert strip_fence(" [1] ") == "[1]"


def test_extract_blocks_answer_is_trimmed():
    ex = extract_blocks(completion(answer="  C \n"))
    assert ex.ok and ex.blocks.answer == "C"


# ------------------------------------------------------------------ answers
TFU = Problem.from_dict({"id": "p", "kind": "true_false_uncertain", "premises": [{"id": "h1", "formal": "A"}],
                         "goal": "A", "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "A"})
KK = Problem.from_dict({"id": "k", "kind": "assignment", "premises": [{"id": "h1", "formal": "Knight zoey"}],
                        "atoms": ["Knight zoey", "Knight oliver"],
                        "assignment": {"Knight zoey": False, "Knight oliver": True}})


@pytest.mark.parametrize("text, label", [("A", "True"), (" a ", "True"), ("true", "True"), ("B", "False"),
                                          ("FALSE", "False"), ("c", "Uncertain"), ("Uncertain", "Uncertain")])
def test_label_answers(text, label):
    parsed = parse_answer(TFU, text)
    assert parsed.ok and parsed.label == label
    assert answer_correct(TFU, parsed) == (label == "True")


@pytest.mark.parametrize("text", ["D", "True or False", "The answer is A", "yes", "A B"])
def test_unreadable_label_is_a_wrong_answer_with_reason(text):
    parsed = parse_answer(TFU, text)
    assert not parsed.ok and "not one of" in parsed.reason
    assert not answer_correct(TFU, parsed)


@pytest.mark.parametrize("text", [
    "(1) Zoey is a knave (2) Oliver is a knight",
    "Oliver is a knight, zoey is a KNAVE",
    "Zoey is a knave\nOliver is a knight",
    "Zoey is not a knight; Oliver is not a knave",
])
def test_assignment_answers(text):
    parsed = parse_answer(KK, text)
    assert parsed.ok, parsed.reason
    assert parsed.literals == {"Knight zoey": False, "Knight oliver": True}
    assert parsed.formulas() == ["¬ Knight zoey", "Knight oliver"]
    assert answer_correct(KK, parsed)


@pytest.mark.parametrize("text, reason", [
    ("Zoey is a knave", "does not assign Knight oliver"),
    ("Zoey is a knave, Oliver is a knight, Zoey is a knight", "more than once"),
    ("Zoey is a knave, Oliver is a knight, Bob is a knight", "not in the problem"),
    ("everyone lies", "does not assign"),
])
def test_bad_assignment_answers(text, reason):
    parsed = parse_answer(KK, text)
    assert not parsed.ok and reason in parsed.reason
    assert not answer_correct(KK, parsed)


def test_wrong_assignment_is_readable_but_incorrect():
    parsed = parse_answer(KK, "Zoey is a knight. Oliver is a knight.")
    assert parsed.ok and not answer_correct(KK, parsed)


def test_problem_without_options_uses_the_default_letters():
    bare = Problem.from_dict({"id": "p", "kind": "true_false_uncertain", "premises": [{"id": "h1", "formal": "A"}],
                              "goal": "A", "answer": "B"})
    assert answer_correct(bare, parse_answer(bare, "False"))
    assert answer_correct(bare, parse_answer(bare, "b"))
    assert not answer_correct(bare, parse_answer(bare, "A"))
    labelled = Problem.from_dict({**bare.to_dict(), "answer": "Uncertain"})
    assert answer_correct(labelled, parse_answer(labelled, "C"))


@settings(max_examples=100, deadline=None)
@given(st.permutations([("zoey", True), ("oliver", False), ("ann", True)]),
       st.sampled_from([" ", ", ", "\n", "; "]), st.booleans())
def test_assignment_reading_ignores_order_separators_and_case(order, sep, numbered):
    problem = Problem.from_dict({"id": "k3", "kind": "assignment", "premises": [{"id": "h1", "formal": "A"}],
                                 "atoms": ["Knight zoey", "Knight oliver", "Knight ann"],
                                 "assignment": {"Knight zoey": True, "Knight oliver": False, "Knight ann": True}})
    parts = [f"{f'({i + 1}) ' if numbered else ''}{name.upper() if i % 2 else name.title()} is a "
             f"{'knight' if value else 'knave'}" for i, (name, value) in enumerate(order)]
    parsed = parse_answer(problem, sep.join(parts))
    assert parsed.ok, parsed.reason
    assert answer_correct(problem, parsed)


def test_names_match_constants_the_way_the_generator_builds_them():
    problem = Problem.from_dict({"id": "k", "kind": "assignment", "premises": [{"id": "h1", "formal": "A"}],
                                 "atoms": ["Knight maryann", "Knight obrien"],
                                 "assignment": {"Knight maryann": True, "Knight obrien": False}})
    parsed = parse_answer(problem, "(1) Mary-Ann is a knight (2) O'Brien is a knave")
    assert parsed.ok, parsed.reason
    assert answer_correct(problem, parsed)


@pytest.mark.parametrize(
    "text, label",
    [("B", "False"), ("b", "False"), ("False", "False"), ("B) False", "False"), ("(B)", "False"),
     ("Answer: B", "False"), ("B. False", "False"), ("answer: (C) Uncertain", "Uncertain"),
     ("B) True", None), ("Bx", None), ("A or B", None), ("(B) Uncertain", None), ("D", None)],
)
def test_decorated_option_letters_are_read_only_when_consistent(text, label):
    from prosfi.data.problem import Problem
    from prosfi.trace.answer import parse_answer

    problem = Problem(id="p", kind="true_false_uncertain", premises=[], goal="A",
                      options={"A": "True", "B": "False", "C": "Uncertain"}, answer="B")
    parsed = parse_answer(problem, text)
    assert parsed.label == label
    assert bool(parsed.reason) == (label is None)
