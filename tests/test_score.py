"""`prosfi score` end to end, and the audit log surviving a killed run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

from prosfi.cli import main
from prosfi.data.problem import Problem, write_problems
from prosfi.rewards import read_audit

OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
PROBLEM = Problem.from_dict({
    "id": "p1", "kind": "true_false_uncertain", "goal": "Alive tom", "options": OPTIONS, "answer": "A",
    "premises": [{"id": "h1", "formal": "∀ x, Cat x → Alive x"}, {"id": "h2", "formal": "Cat tom"}]})
GOOD = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", '
        '"rule": "mp"}]</steps><answer>A</answer>')
BAD_STEP = GOOD.replace('"Alive tom"', '"Alive rex"')


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n" for row in rows)


def test_score_end_to_end(tmp_path, capsys):
    problems, completions, out = tmp_path / "p.jsonl", tmp_path / "c.jsonl", tmp_path / "out.jsonl"
    write_problems([PROBLEM], problems)
    write_jsonl(completions, [
        {"problem_id": "p1", "completion": GOOD},
        {"problem_id": "nope", "completion": GOOD},
        "{not json",
        {"problem_id": "p1", "completion": BAD_STEP},
        {"problem_id": "p1", "completion": [{"role": "assistant", "content": GOOD}]},
        {"problem_id": "p1", "completion": GOOD.replace("<answer>A", "<answer>B")},
        {"problem_id": "p1"},
        {"problem_id": "p1", "completion": "<answer>A</answer>"},
    ])
    assert main(["score", str(problems), str(completions), "-o", str(out), "--workers", "1",
                 "--batch-size", "3", "--audit", str(tmp_path / "audit.jsonl")]) == 0
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["reward"] for x in lines] == [1.0, None, None, 0.3, 1.0, 0.1, None, 0.0]
    for x in lines:
        assert set(x) >= {"problem_id", "reward", "format_ok", "answer_correct", "chain_valid", "steps", "reason"}
    assert "unknown problem_id 'nope'" in lines[1]["reason"] and "line 2" in lines[1]["reason"]
    assert "not JSON" in lines[2]["reason"]
    assert lines[3]["steps"] == [{"id": "s1", "verdict": "rejected", "reason": lines[3]["steps"][0]["reason"]}]
    assert "reject_fresh_symbols" in lines[3]["steps"][0]["reason"]
    assert lines[0]["chain_valid"] and not lines[3]["chain_valid"]
    assert "completion" in lines[6]["reason"] and not lines[7]["format_ok"]
    assert len(list(read_audit(tmp_path / "audit.jsonl"))) == 5  # the scored ones
    err = capsys.readouterr().err
    assert "prosfi score: 2 of 8 line(s) unreadable: no reward, a reason only (first: line 3: not JSON" in err
    assert main(["score", str(problems), str(completions), "--workers", "1"]) == 0  # records on stdout: said too
    assert "2 of 8 line(s) unreadable" in capsys.readouterr().err


def test_files_that_open_with_a_utf8_bom_are_read(tmp_path, capsys):
    """Windows editors (Notepad, Excel's CSV-to-UTF-8) start a file with a byte-order mark."""
    problems, completions = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    write_problems([PROBLEM], problems)
    problems.write_bytes(b"\xef\xbb\xbf" + problems.read_bytes())
    completions.write_bytes(b"\xef\xbb\xbf" + json.dumps({"problem_id": "p1", "completion": GOOD}).encode() + b"\n")
    assert main(["score", str(problems), str(completions), "--workers", "1"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["reward"] == 1.0 and "unreadable" not in out.err


def test_score_outcome_mode_to_stdout(tmp_path, capsys):
    problems, completions = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    write_problems([PROBLEM], problems)
    write_jsonl(completions, [{"problem_id": "p1", "completion": BAD_STEP}])
    assert main(["score", str(problems), str(completions), "--reward", "outcome"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    rec = json.loads(line)
    assert rec["reward"] == 1.0 and rec["steps"] == [] and rec["mode"] == "outcome"


def test_bad_problems_file_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "p.jsonl").write_text('{"id": "x"}\n')
    (tmp_path / "c.jsonl").write_text("")
    assert main(["score", str(tmp_path / "p.jsonl"), str(tmp_path / "c.jsonl")]) == 2
    assert "cannot load problems" in capsys.readouterr().err


SCORER = textwrap.dedent("""
    import json, sys, time
    from prosfi.data.problem import Problem
    from prosfi.rewards import make_reward_funcs
    from prosfi.verify.verifier import Verifier
    problem = json.dumps(Problem.from_dict(json.loads(sys.argv[2])).to_dict())
    good, bad = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    with Verifier(workers=0) as v:
        (fn,) = make_reward_funcs("prosfi", verifier=v, audit_path=sys.argv[1])
        batch = 0
        while True:  # a training run that never ends on its own
            fn(completions=[good, bad, "junk", good], problem=[problem] * 4)
            batch += 1
            print(batch, flush=True)
            time.sleep(0.01)
""")


def test_audit_log_survives_a_killed_run(tmp_path):
    audit = tmp_path / "run" / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", SCORER, str(audit), json.dumps(PROBLEM.to_dict()),
                             json.dumps(GOOD), json.dumps(BAD_STEP)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        for line in proc.stdout:  # wait for a few batches, then kill without warning
            if int(line) >= 3 or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)
    records = list(read_audit(audit))
    assert len(records) >= 12 and len(records) % 4 == 0  # whole batches only
    assert [r["reward"] for r in records[:4]] == [1.0, 0.3, 0.0, 1.0]
    assert all(r["problem_id"] == "p1" and len(r["completion_sha256"]) == 64 for r in records)
    assert records[1]["steps"][0]["verdict"] == "rejected"  # `rex` is a fresh symbol


def test_read_audit_skips_a_torn_last_line(tmp_path):
    path = tmp_path / "audit.jsonl"
    path.write_text('{"reward": 1.0}\n{"reward": 0.3}\n{"rew', encoding="utf-8")
    assert [r["reward"] for r in read_audit(path)] == [1.0, 0.3]
