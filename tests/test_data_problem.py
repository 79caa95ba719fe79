"""The Problem schema: round trips, and validation errors that name the line and the field."""

from __future__ import annotations

import json
import re

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


QTY = {"id": "gsm8k-test-0000", "source": "gsm8k", "kind": "quantity", "context": "",
       "question": "Janet's ducks lay 16 eggs per day. She eats 3 for breakfast and bakes muffins with 4. "
                   "She sells the rest for $2 per egg. How many dollars does she make every day?",
       "premises": [],
       "givens": [{"id": "g1", "value": "16", "unit": "", "text": "16 eggs", "start": 18, "end": 25},
                  {"id": "g2", "value": "3", "unit": "", "text": "3"},
                  {"id": "g3", "value": "4", "unit": "", "text": "4"},
                  {"id": "g4", "value": "2", "unit": "USD", "text": "$2"}],
       "target": {"name": "income", "unit": "USD"}, "answer": {"value": "18", "unit": "USD"},
       "difficulty": 2, "split": "test"}


def test_quantity_round_trip_keeps_every_field(tmp_path):
    path = tmp_path / "q.jsonl"
    assert write_problems([Problem.from_dict(QTY), Problem.from_dict(KK)], path) == 2
    back = list(read_problems(path))
    assert [p.to_dict() for p in back] == [QTY, KK]
    q = back[0]
    assert q.kind == "quantity" and q.answer == {"value": "18", "unit": "USD"} and q.extra == {"split": "test"}
    assert list(q.given_map) == ["g1", "g2", "g3", "g4"] and q.given_map["g4"]["unit"] == "USD"
    assert q.answer_label is None


def test_quantity_premises_are_optional_but_logic_premises_are_not():
    q = Problem.from_dict({k: v for k, v in QTY.items() if k != "premises"})
    assert q.premises == [] and q.to_dict()["premises"] == []
    with pytest.raises(ValueError, match="premises"):
        Problem.from_dict({k: v for k, v in KK.items() if k != "premises"})


@pytest.mark.parametrize("record,field", [
    (_broken(QTY, givens={"g1": 16}), "givens"),
    (_broken(QTY, givens=[{"id": "g1"}]), "givens[0]"),
    (_broken(QTY, target="USD"), "target"),
])
def test_malformed_quantity_records_fail_while_reading(tmp_path, record, field):
    path = _write(tmp_path, [QTY, record])
    with pytest.raises(ValueError, match=rf"^{re.escape(path)}:2: field '{re.escape(field)}"):
        list(read_problems(path))


@pytest.mark.parametrize("record,field,why", [
    (_broken(QTY, givens=[{"id": "g1", "value": "16"}, {"id": "g1", "value": "3"}]), "givens[1].id", "duplicate"),
    (_broken(QTY, givens=[{"id": "g1", "value": "sixteen-ish"}]), "givens[0]", "does not parse"),
    (_broken(QTY, givens=[{"id": "g1", "value": "16", "unit": "furlongs_per_blorp"}]), "givens[0]",
     "does not parse"),
    (_broken(QTY, answer="18"), "answer", "must be an object"),
    (_broken(QTY, answer={"value": "18", "unit": "m"}), "answer", "does not match the target"),
    (_broken(QTY, target={"name": "x", "unit": "blorp"}), "target.unit", "does not parse"),
    (_broken(QTY, question=""), "question", "non-empty"),
])
def test_quantity_validation_names_line_and_field(tmp_path, record, field, why):
    pytest.importorskip("prosfi.quant")
    assert len(list(read_problems(_write(tmp_path, [QTY]), validate=True))) == 1
    path = _write(tmp_path, [QTY, record])
    with pytest.raises(ValueError) as exc:
        list(read_problems(path, validate=True))
    msg = str(exc.value)
    assert msg.startswith(f"{path}:2: field '{field}") and why in msg, msg
