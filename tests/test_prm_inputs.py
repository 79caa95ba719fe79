"""Issue 21, items 6 and 7 (PRM side): `prosfi prm score|label|rerank` drop completions whose problem was
not loaded (another source, `--limit`) with a note and a count, as `prosfi eval` does; the rerank table's
"random (expected)" row is the expected accuracy of a uniform pick per problem, averaged over problems."""

from __future__ import annotations

import json

import pytest

from prosfi.cli import main
from prosfi.data import kk
from prosfi.data.gold import gold_completion
from prosfi.data.problem import write_problems
from prosfi.prm.rerank import rerank_table


@pytest.fixture()
def work(tmp_path):
    problems = kk.generate(kk.KKConfig(people=2), 3, 7)
    write_problems(problems[:2], tmp_path / "problems.jsonl")  # the third problem is not loaded
    lines = [{"problem_id": p.id, "completion": gold_completion(p), "sample": s} for p in problems for s in (0, 1)]
    (tmp_path / "completions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return tmp_path, [p.id for p in problems]


def _jsonl(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_prm_label_drops_completions_of_problems_not_loaded(work, capsys):
    tmp, ids = work
    assert main(["prm", "label", "--data", str(tmp / "problems.jsonl"), "--completions",
                 str(tmp / "completions.jsonl"), "-o", str(tmp / "lab"), "--val-fraction", "0"]) == 0
    err = capsys.readouterr().err
    assert "2 completion(s)" in err and "not loaded" in err
    stats = json.loads((tmp / "lab" / "stats.json").read_text())
    assert stats["labelling"]["completions"] == 4 and stats["labelling"]["format_failures"] == 0
    assert {r["problem_id"] for r in _jsonl(tmp / "lab" / "completions.jsonl")} == set(ids[:2])


class _FakePRM:
    calls = 0

    def score_steps(self, items):
        self.calls += len(items)
        return [0.5] * len(items)


def test_prm_score_drops_completions_of_problems_not_loaded(work, capsys, monkeypatch):
    import prosfi.prm.model as model

    tmp, ids = work
    (tmp / "prm").mkdir()
    (tmp / "prm" / model.MARKER).write_text('{"objective": "sft"}')
    monkeypatch.setattr(model, "load_prm", lambda *a, **k: _FakePRM())
    assert main(["prm", "score", "--prm", str(tmp / "prm"), "--data", str(tmp / "problems.jsonl"),
                 "--completions", str(tmp / "completions.jsonl"), "-o", str(tmp / "scores.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "2 completion(s)" in err and "not loaded" in err
    records = _jsonl(tmp / "scores.jsonl")
    assert len(records) == 4 and {r["problem_id"] for r in records} == set(ids[:2])
    # the same file with records of unloaded problems (an older score file): rerank leaves them out
    extra = [{**records[0], "problem_id": "elsewhere", "source": None, "difficulty": None, "reason": "unknown problem"}]
    (tmp / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + extra))
    assert main(["prm", "rerank", "--scores", str(tmp / "mixed.jsonl"), "--bootstrap", "20"]) == 0
    out = capsys.readouterr()
    assert "1 record(s)" in out.err and "not loaded" in out.err
    assert "| prm:min | 2 | 2 |" in out.out


def _rec(pid, sample, correct, valid=False):
    return {"problem_id": pid, "sample": sample, "step_scores": [0.5], "answer": "A" if correct else "B",
            "answer_correct": correct, "chain_valid": valid, "format_ok": True, "n_steps": 1, "verified_steps": 1,
            "unknown_steps": 0, "source": "s", "difficulty": None}


def test_random_row_is_the_expected_uniform_pick_per_problem():
    # p: 2 candidates, 1 right; q: 4 candidates, all right (and verified)
    records = [_rec("p", 0, True), _rec("p", 1, False)] + [_rec("q", i, True, valid=True) for i in range(4)]
    rows = {r["method"]: r for r in rerank_table(records, n_boot=50)}
    random = rows["random (expected)"]
    assert random["accuracy"] == pytest.approx((1 / 2 + 1) / 2)  # not 5/6, the ratio of sums
    assert random["reward_hit"] == pytest.approx((0 + 1) / 2)
    assert random["problems"] == 2
