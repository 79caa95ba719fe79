"""The Problem schema: round trips, and validation errors that name the line and the field."""

from __future__ import annotations

import json

import pytest

from prosfi.cli import main
from prosfi.data.problem import Problem, read_problems, write_problems

KK = {"id": "kk-2-0000", "source": "knights_knaves", "kind": "assignment", "context": "…", "question": "…",
      "premises": [{"id": "h1", "text": "Zoey: Oliver is a knave.",
                    "formal": "Knight zoey ↔ ¬ Knight oliver"},
                   {"id": "h2", "text": "Oliver: we are alike.",
                    "formal": "Knight oliver ↔ (Knight zoey ↔ Knight oliver)"}],
      "atoms": ["Knight zoey", "Knight oliver"],
      "assignment": {"Knight zoey": False, "Knight oliver": True},
      "difficulty": 2}
PQA = {"id": "pqa-hard-0012", "source": "proverqa", "kind": "true_false_uncertain", "context": "…",
       "question": "…",
       "premises": [{"id": "h1", "text": "Kind things are nice.", "formal": "∀ x, Kind x → Nice x"},
                    {"id": "h2", "text": "Candy is kind.", "formal": "Kind candy"}],
       "goal": "Nice candy", "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "A",
       "difficulty": "hard", "depth": 1}


def _write(tmp_path, records) -> str:
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


def test_round_trip_keeps_every_field(tmp_path):
    problems = [Problem.from_dict(KK), Problem.from_dict(PQA)]
    path = tmp_path / "out.jsonl"
    assert write_problems(problems, path) == 2
    back = list(read_problems(path, validate=True))
    assert [p.to_dict() for p in back] == [KK, PQA]
    assert back[1].extra == {"depth": 1} and back[1].answer_label == "True"


def _broken(base: dict, **changes) -> dict:
    d = json.loads(json.dumps(base))
    for key, value in changes.items():
        d[key] = value
    return d


@pytest.mark.parametrize("record,field,why", [
    (_broken(PQA, premises=[{"id": "h1", "formal": "∀ x, Kind x →"}]), "premises[0].formal",
     "does not parse"),
    (_broken(PQA, premises=[{"id": "h1", "formal": "Kind candy"}, {"id": "h1", "formal": "Nice candy"}]),
     "premises[1].id", "duplicate"),
    (_broken(PQA, answer="D"), "answer", "not one of"),
    (_broken(PQA, goal="Nice (candy"), "goal", "does not parse"),
    (_broken(PQA, goal=None), "goal", "non-empty"),
    (_broken(PQA, options={"A": "Yes"}), "options", "not one of"),
    (_broken(PQA, premises=[{"id": "h1", "formal": "Kind candy"}, {"id": "h2", "formal": "Kind candy bob"}]),
     "premises", "signature"),
    (_broken(KK, assignment={"Knight zoey": False}), "assignment", "no value"),
    (_broken(KK, assignment={"Knight zoey": False, "Knight oliver": True, "Knight bob": True}), "assignment",
     "not one of the atoms"),
    (_broken(KK, atoms=["Knight zoey", "Knight zoey"]), "atoms", "duplicates"),
    (_broken(KK, atoms=[]), "atoms", "must list"),
    (_broken(KK, premises=[]), "premises", "empty"),
])
def test_validation_names_line_and_field(tmp_path, record, field, why):
    path = _write(tmp_path, [KK, record])
    with pytest.raises(ValueError) as exc:
        list(read_problems(path, validate=True))
    msg = str(exc.value)
    assert msg.startswith(f"{path}:2: field '{field}") and why in msg, msg


@pytest.mark.parametrize("record,field", [
    (_broken(KK, assignment={"Knight zoey": "no", "Knight oliver": True}), "assignment['Knight zoey']"),
    (_broken(KK, kind="puzzle"), "kind"),
    ({k: v for k, v in KK.items() if k != "premises"}, "premises"),
])
def test_malformed_records_fail_while_reading(tmp_path, record, field):
    path = _write(tmp_path, [PQA, PQA, record])
    with pytest.raises(ValueError, match=rf"^{path}:3: .*{field[:8]}"):
        list(read_problems(path))


def test_bad_json_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(KK) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:3: not valid JSON"):
        list(read_problems(path))


def test_cli_validate_reports_the_line(tmp_path, capsys):
    good = _write(tmp_path, [KK, PQA])
    assert main(["data", "validate", good]) == 0
    bad = _write(tmp_path, [KK, _broken(PQA, answer="Z")])
    assert main(["data", "validate", bad]) == 2
    assert ":2: field 'answer'" in capsys.readouterr().err
