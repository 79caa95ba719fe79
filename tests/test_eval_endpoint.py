"""`prosfi eval --endpoint`: against a stand-in OpenAI-compatible server started here, with retries,
and an interrupted run (some requests failing) resumed from the request cache."""

from __future__ import annotations

import json

import pytest
from standin_openai import StandinServer  # tests/standin_openai.py

from prosfi.cli import main
from prosfi.data.gold import gold_completion
from prosfi.data.problem import write_problems
from prosfi.data.prompts import user_prompt
from prosfi.eval.endpoint import EndpointConfig, EndpointError, chat_url, generate_endpoint
from prosfi.eval.generate import GenerationConfig
from prosfi.eval.sources import load_source


@pytest.fixture(scope="module")
def problems():
    return load_source("kk:2", count=5).problems


def answers(problems):
    return {user_prompt(p): gold_completion(p) for p in problems}


def test_chat_url():
    assert chat_url("http://h:8000") == "http://h:8000/v1/chat/completions"
    assert chat_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert chat_url("https://api.x/v1/chat/completions") == "https://api.x/v1/chat/completions"


def test_rate_limited_requests_are_retried(problems, tmp_path):
    with StandinServer(answers(problems), flaky=True) as server:
        cfg = EndpointConfig(server.url, "served", concurrency=3, retries=2, backoff_s=0.01)
        gens = generate_endpoint(problems, cfg, GenerationConfig(n=2, temperature=0.7), progress=False,
                                 cache_path=tmp_path / "cache.jsonl")
    assert [(g.problem_id, g.sample) for g in gens] == [(p.id, k) for p in problems for k in range(2)]
    assert all(g.completion == gold_completion(next(p for p in problems if p.id == g.problem_id)) for g in gens)
    assert len(server.requests) == 2 * len(gens)  # each one refused once, then answered
    body = server.requests[0]
    assert body["model"] == "served" and body["temperature"] == 0.7 and body["messages"][0]["role"] == "system"
    assert {r["seed"] for r in server.requests} == {0, 1}  # one seed per sample index


def test_interrupted_evaluation_resumes_from_the_cache(problems, tmp_path, capsys):
    path = tmp_path / "problems.jsonl"
    write_problems(problems, path)
    out = tmp_path / "out"
    down = {user_prompt(problems[1]), user_prompt(problems[3])}
    argv = ["eval", "--data", str(path), "--endpoint", None, "--served-model", "m", "-o", str(out),
            "--retries", "1", "--concurrency", "2", "--workers", "0", "--no-plots", "--no-progress"]
    with StandinServer(answers(problems), failing=down) as server:
        argv[4] = server.url
        assert main(argv) == 1
    assert "2 of 5 requests failed" in capsys.readouterr().err
    cached = [json.loads(x) for x in (out / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(c["problem_id"] for c in cached) == sorted(p.id for i, p in enumerate(problems) if i not in (1, 3))
    assert not (out / "summary.json").exists()

    with StandinServer(answers(problems)) as server:
        argv[4] = server.url
        assert main(argv) == 0
    # only the two requests that had failed were sent again
    assert sorted(r["messages"][-1]["content"] for r in server.requests) == sorted(down)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_completions"] == 5 and summary["model"] == "m"
    assert summary["overall"]["reward_hit"] == 1.0  # the served gold traces verify


def test_generate_endpoint_raises_after_finishing_the_rest(problems, tmp_path):
    with StandinServer(answers(problems), failing={user_prompt(problems[0])}) as server:
        cfg = EndpointConfig(server.url, "m", retries=0)
        with pytest.raises(EndpointError, match="1 of 5"):
            generate_endpoint(problems, cfg, progress=False, cache_path=tmp_path / "c.jsonl")
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 4
