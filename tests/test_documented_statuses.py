"""Issue 27, "every failure has the documented status": a usage mistake is one line and exit 2, nothing written
and nothing announced first."""

from __future__ import annotations

import socket

import pytest

from prosfi.cli import main


def _one_line_exit_2(argv, capsys, needle):
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not captured.out
    return err


@pytest.mark.parametrize("argv,needle", [
    (["data", "toy", "--count", "-5"], "--count must be at least 1, got -5"),
    (["data", "physics", "--count", "0"], "--count must be at least 1"),
    (["data", "kk", "--count", "-1"], "--count must be at least 1"),
    (["data", "gsm8k", "--file", "x.jsonl", "--limit", "-3"], "--limit must be at least 1"),
])
def test_counts_that_cannot_be_meant_are_refused(tmp_path, capsys, argv, needle):
    out = tmp_path / "out.jsonl"
    _one_line_exit_2(argv + ["-o", str(out)], capsys, needle)
    assert not out.exists()


def test_prompts_refuse_negative_few_shot(tmp_path, capsys):
    problems = tmp_path / "toy.jsonl"
    assert main(["data", "toy", "--count", "2", "-o", str(problems)]) == 0
    out = tmp_path / "rows.jsonl"
    _one_line_exit_2(["data", "prompts", str(problems), "--few-shot", "-2", "-o", str(out)], capsys,
                     "--few-shot must be at least 0")
    assert not out.exists()


@pytest.mark.parametrize("command,content", [("gsm8k", '{"text": "not gsm8k"}\n'), ("gsm8k", ""),
                                             ("scibench", "[]")])
def test_a_file_with_no_usable_record_writes_nothing(tmp_path, capsys, command, content):
    src, out = tmp_path / "in.json", tmp_path / "out.jsonl"
    src.write_text(content)
    _one_line_exit_2(["data", command, "--file", str(src), "-o", str(out)], capsys, "nothing written")
    assert not out.exists()


def test_serve_on_a_busy_port_says_so_before_announcing_anything(capsys):
    pytest.importorskip("uvicorn")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        err = _one_line_exit_2(["serve", "--port", str(port)], capsys, f"cannot listen on 127.0.0.1:{port}")
    assert "http://" not in err
