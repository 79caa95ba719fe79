"""`--data SPEC` sources (generated, files as the benchmarks ship them, FOLIO) and the held-out check."""

from __future__ import annotations

from pathlib import Path

import pytest

from prosfi.data.folio import ascii_identifier, load_folio
from prosfi.data.problem import write_problems
from prosfi.eval.sources import SpecError, group_of, load_source, load_sources, overlap
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

FIXTURES = Path(__file__).parent / "fixtures"


def test_generated_sources_are_grouped_by_people_and_difficulty():
    kk = load_source("kk:2..4", count=3)
    assert [group_of(p) for p in kk.problems] == [("kk", str(n)) for n in (2, 3, 4) for _ in range(3)]
    assert {len(p.atoms) for p in kk.problems if group_of(p)[1] == "4"} == {4}
    fol = load_source("fol:easy,hard", count=2, limit=1)  # limit caps each group
    assert [group_of(p) for p in fol.problems] == [("fol", "easy"), ("fol", "hard")]
    assert load_source("kk:3", count=2).problems[0].id == load_source("kk:3", count=2).problems[0].id  # seeded
    assert load_source("kk:3", count=2, seed=1).problems[0].premises != load_source("kk:3", count=2).problems[0].premises


def test_files_as_the_benchmarks_ship_them(tmp_path):
    pqa = load_source(f"proverqa:hard={FIXTURES / 'proverqa_dev.json'}")
    assert pqa.problems and {group_of(p) for p in pqa.problems} == {("proverqa", "hard")}
    hub = load_source(f"kkhub:{FIXTURES / 'kk_records.jsonl'}")
    assert hub.problems and all(group_of(p) == ("kk_hub", str(len(p.atoms))) for p in hub.problems)
    path = tmp_path / "mine.jsonl"
    write_problems(load_source("kk:2", count=3).problems, path)
    mine = load_source(str(path), limit=2)
    assert len(mine.problems) == 2 and group_of(mine.problems[0]) == ("knights_knaves", "2")


def test_bad_specs_say_what_is_accepted(tmp_path):
    for spec, words in [("kk:9", "2..8"), ("fol:impossible", "easy"), ("nope:1", "unknown source"),
                        ("proverqa:train=x.json", "no FOL annotations"), (str(tmp_path / "missing.jsonl"), "no such")]:
        with pytest.raises(SpecError, match=words):
            load_source(spec)
    with pytest.raises(SpecError, match="in both"):
        load_sources(["kk:2", "kk:2"], count=2)


def test_overlap_finds_the_same_premises_and_goal_under_another_id():
    a = load_source("kk:2", count=4).problems
    b = load_source("kk:2", count=4, seed=99).problems
    renamed = a[1]
    renamed.id = "renamed"
    assert overlap(b + [renamed], a) == ["renamed"]


def test_folio_records_in_the_documented_format():
    skipped: list = []
    problems = load_folio(FIXTURES / "folio_sample.jsonl", skipped=skipped)
    by_id = {p.id: p for p in problems}
    assert sorted(by_id) == ["folio-1", "folio-2", "folio-3", "folio-4", "folio-5"]
    p1 = by_id["folio-1"]
    assert p1.premises[0].formal == "∀ x, DrinkRegularly x coffee → IsDependentOn x caffeine"
    assert p1.goal == "IsDependentOn rina caffeine" and p1.answer_label == "True"
    assert p1.premises[2].text == "Rina regularly drinks coffee."
    assert by_id["folio-3"].premises[0].formal == "Xor' (Tall tom) (Short tom)"  # ⊕, v1 lists
    assert by_id["folio-3"].answer_label == "Uncertain"  # v1's "Unknown"
    p4 = by_id["folio-4"]  # non-ASCII names become ASCII, consistently within the record
    assert p4.premises[1].formal == "CafeIn gruner zurich" and p4.goal == "OpenOnSunday gruner"
    assert "u6771u4eac" in p4.premises[2].formal and p4.premises[2].formal.startswith("¬ (∃ x,")
    assert all(p.formal.isascii() or set(p.formal) - set(map(chr, range(128))) <= set("∀∃¬∧∨→↔")
               for p in p4.premises)
    reasons = dict(skipped)
    assert sorted(reasons) == [5, 6, 7]
    assert "equality" in reasons[5] and "expected ')'" in reasons[6] and "arity" in reasons[7]


def test_folio_labels_are_compared_with_the_verifier():
    with Verifier(VerifierConfig(workers=0)) as verifier:
        src = load_source(f"folio:{FIXTURES / 'folio_sample.jsonl'}", verifier=verifier)
    assert len(src.problems) == 5 and len(src.skipped) == 3
    # folio-5 claims "Tweety can fly" is True from "some birds fly": the FOL makes it Uncertain
    assert src.notes == ["folio labels: 4 of 5 confirmed by the verifier, 1 disagree, 0 undecided",
                         "folio-5: gold label True, verifier says Uncertain"]
    assert [p.extra["verifier_label"] for p in src.problems] == ["True", "False", "Uncertain", "True", "Uncertain"]
    assert all(group_of(p) == ("folio", None) for p in src.problems)


def test_ascii_identifier():
    assert ascii_identifier("Zürich") == "Zurich"
    assert ascii_identifier("東") == "u6771"
    assert ascii_identifier("plain") == "plain"


def test_readme_eval_commands_parse():
    """Every `prosfi eval` command docs/eval.md shows is accepted by the parser (flags cannot drift)."""
    import argparse
    import shlex

    from prosfi.eval.cli import add_arguments

    section = (Path(__file__).parent.parent / "docs" / "eval.md").read_text(encoding="utf-8")
    commands = [line.split("#")[0].strip() for line in section.splitlines() if line.startswith("prosfi eval")]
    assert len(commands) >= 5
    for command in commands:
        parser = argparse.ArgumentParser(prog="prosfi eval", exit_on_error=False)
        add_arguments(parser)
        args = parser.parse_args(shlex.split(command)[2:])
        assert args.data or args.compare[:1] == ["compare"], command


def test_folio_problems_verify_end_to_end(tmp_path):
    """Gold traces of the translated FOLIO problems (non-ASCII names included) verify under `prosfi eval`."""
    from prosfi.data.gold import gold_completion
    from prosfi.eval import Generation, evaluate

    src = load_source(f"folio:{FIXTURES / 'folio_sample.jsonl'}")
    gens = [Generation(p.id, 0, g) for p in src.problems if (g := gold_completion(p)) is not None]
    assert {g.problem_id for g in gens} >= {"folio-1", "folio-2", "folio-4"}
    result = evaluate([src], gens, out_dir=tmp_path, plots=False, n_boot=100)
    assert result.summary["overall"]["reward_hit"] == 1.0
    assert result.summary["groups"][0]["source"] == "folio" and result.summary["groups"][0]["difficulty"] is None
    assert result.summary["sources"][0]["skipped"] == 3
