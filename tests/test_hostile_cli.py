"""Hostile input files for `prosfi check` and `prosfi score`, run as a user runs them (issue #10, 2-3).

Each file mixes good lines with lines that used to crash a command or split into two answers:
JSON nested 3,000 deep, a 5,000-digit integer, NaN/Infinity ids, a lone surrogate, bytes that
are not UTF-8, a bare `\\r` inside a line, blank lines, CRLF endings, a last line without a
newline. Asserted for every file: exit 0, no traceback, exactly one output line per input line
(each standard JSON), good lines answered as usual, bad lines answered with an error or reason.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from cli_subprocess import prosfi as run_prosfi  # tests/cli_subprocess.py

ROOT = Path(__file__).resolve().parents[1]
DEEP = "[" * 3000 + "]" * 3000
BIG = "9" * 5000
prosfi = functools.partial(run_prosfi, text=False, timeout=180)  # bytes: the outputs must be checked as bytes


def standard_json(line: str):
    """json.loads that refuses NaN/Infinity, as a strict JSON reader would."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(line, parse_constant=refuse)


def input_lines(data: bytes) -> int:
    """Lines as prosfi counts them: split at \\n only, a last line without newline counts."""
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def ok(premise_id: str = "h1") -> str:
    return json.dumps({"id": "good", "premises": {premise_id: "P a"}, "conclusion": "P a"})


CHECK_LINES = [
    ok().encode(),
    b"",                                                                     # blank line
    b'{"id": "cr",\r"premises": {"h1": "P a"},\r"conclusion": "P a"}',  # JSON-legal bare \r inside
    b'{"id": "crlf", "premises": {"h1": "P a"}, "conclusion": "Q a"}\r',   # CRLF ending
    b'{"id": "deep", "premises": ' + DEEP.encode() + b', "conclusion": "P"}',
    b'{"id": ' + BIG.encode() + b', "premises": {}, "conclusion": "P"}',
    b'{"id": NaN, "premises": {"h1": "P a"}, "conclusion": "P a"}',
    b'{"id": Infinity, "premises": {"h1": "P a"}, "conclusion": "P a"}',
    b'{"id": 1e999, "premises": {"h1": "P a"}, "conclusion": "P a"}',
    b'{"id": "surrogate", "premises": {"h1": "\\ud800"}, "conclusion": "P a"}',
    b"\xff\xfe\x00 binary junk \x80\x81",
    b'{"id": "utf8-bad \xc3\x28", "premises": {"h1": "P a"}, "conclusion": "P a"}',
    b"[1, 2, 3]",
    ok().encode(),                                                           # last line, no newline
]


def test_prosfi_check_answers_every_hostile_line(tmp_path):
    data = b"\n".join(CHECK_LINES)
    path = tmp_path / "steps.jsonl"
    path.write_bytes(data)
    proc = prosfi("check", str(path), "--workers", "1", "--timeout-ms", "1000")
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    out = proc.stdout.decode("utf-8").split("\n")
    assert out[-1] == ""  # every record ends with a newline
    records = [standard_json(line) for line in out[:-1]]
    assert len(records) == input_lines(data) == len(CHECK_LINES)
    verdicts = [r["verdict"] for r in records]
    assert verdicts[0] == "valid" and verdicts[-1] == "valid"
    assert records[2]["id"] == "cr" and verdicts[2] == "valid"  # the \r stayed inside its line
    assert records[3]["id"] == "crlf" and verdicts[3] == "invalid"
    assert verdicts[1] == "error" and all(v == "error" for v in verdicts[4:11])
    assert "nested too deeply" in records[4]["detail"] and records[4]["id"] == "deep"
    assert "4300" in records[5]["detail"] or "digits" in records[5]["detail"]
    assert "NaN" in records[6]["detail"] and records[6]["id"] is None
    assert "Infinity" in records[7]["detail"]


def test_prosfi_check_reads_stdin_the_same_way():
    data = b"\n".join(CHECK_LINES) + b"\n"
    proc = prosfi("check", "-", "--workers", "1", stdin=data)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    assert len(proc.stdout.decode().splitlines()) == len(CHECK_LINES)


def test_prosfi_check_o_prints_a_summary_and_empty_input_says_so(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"\n".join(CHECK_LINES[:4]) + b"\n")
    proc = prosfi("check", str(path), "-o", str(tmp_path / "v.jsonl"), "--workers", "1")
    assert proc.returncode == 0 and proc.stdout == b""
    summary = proc.stderr.decode().strip().splitlines()
    assert len(summary) == 1 and "4 line(s)" in summary[0] and "2 valid" in summary[0] and "1 invalid" in summary[0]
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 4
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    proc = prosfi("check", str(empty), "--workers", "1")
    assert proc.returncode == 0 and proc.stdout == b"" and b"empty" in proc.stderr


@pytest.fixture(scope="module")
def problems_and_gold(tmp_path_factory):
    where = tmp_path_factory.mktemp("score")
    assert prosfi("data", "kk", "--people", "2", "--count", "2", "-o", "p.jsonl", cwd=where).returncode == 0
    assert prosfi("data", "gold", "p.jsonl", "-o", "g.jsonl", cwd=where).returncode == 0
    gold = [json.loads(line) for line in (where / "g.jsonl").read_text().splitlines()]
    return where, gold


def test_prosfi_score_answers_every_hostile_line(problems_and_gold):
    where, gold = problems_and_gold
    pid = gold[0]["problem_id"]
    deep_step = "∀ " + " ".join(f"x{i}" for i in range(40)) + ", Knight x0"

    def completion(steps: str) -> bytes:
        text = f"<think>x</think><steps>{steps}</steps><answer>(1) a</answer>"
        return json.dumps({"problem_id": pid, "completion": text}).encode()

    lines = [
        json.dumps(gold[0]).encode(),
        b"",                                                                   # blank: its own answer
        json.dumps({"problem_id": pid, "completion": "<think>a\rb</think><steps>[]</steps><answer>x</answer>"})
        .encode(),                                                             # escaped \r: fine anyway
        b'{"problem_id": "%s",\r"completion": "<think>a</think><steps>[]</steps><answer>x</answer>"}'
        % pid.encode(),                                                        # a JSON-legal bare \r inside
        b'{"problem_id": "%s", "completion": %s}' % (pid.encode(), DEEP.encode()),
        completion('[{"id": "s1", "dependencies": [], "conclusion": "P", "n": ' + BIG + "}]"),
        completion(DEEP),
        completion(json.dumps([{"id": "s1", "dependencies": ["h1"], "conclusion": deep_step}])),
        b'{"problem_id": NaN, "completion": "x"}',
        b"\xff\xfe\x00 binary junk",
        json.dumps(gold[1]).encode(),
    ]
    data = b"\n".join(lines)
    path = where / "c.jsonl"
    path.write_bytes(data)
    proc = prosfi("score", "p.jsonl", "c.jsonl", "--workers", "1", "--timeout-ms", "1000", cwd=where)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0 and "Traceback" not in err, err
    records = [standard_json(line) for line in proc.stdout.decode().splitlines()]
    assert len(records) == len(lines) == input_lines(data)
    rewards = [r["reward"] for r in records]
    assert rewards[0] == 1.0 and rewards[-1] == 1.0  # the gold traces around the junk still score
    assert rewards[1] is None and "empty line" in records[1]["reason"]
    assert rewards[2] == 0.1 and rewards[3] == 0.1  # the bare \r kept the line whole: read, wrong answer
    assert rewards[4] is None and "nested too deeply" in records[4]["reason"]
    assert rewards[5] == 0.0 and "not valid JSON" in records[5]["reason"]  # a format failure, not a crash
    assert rewards[6] == 0.0
    assert rewards[7] == 0.1  # the deep-binder step is checked (and not valid): a wrong answer, no hang
    assert rewards[8] is None and rewards[9] is None and "UTF-8" in records[9]["reason"]


def test_prosfi_score_o_prints_a_summary_and_empty_input_says_so(problems_and_gold):
    where, gold = problems_and_gold
    (where / "two.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    proc = prosfi("score", "p.jsonl", "two.jsonl", "-o", "s.jsonl", "--workers", "1", cwd=where)
    assert proc.returncode == 0 and proc.stdout == b""
    summary = proc.stderr.decode().strip().splitlines()
    assert len(summary) == 1 and "2 line(s)" in summary[0] and "mean reward 1.000" in summary[0]
    (where / "none.jsonl").write_bytes(b"")
    proc = prosfi("score", "p.jsonl", "none.jsonl", "--workers", "1", cwd=where)
    assert proc.returncode == 0 and proc.stdout == b"" and b"empty" in proc.stderr
