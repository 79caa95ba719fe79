"""`prosfi eval` extras: the optional LLM judge (against the stand-in server), --wandb offline, and
the vLLM engine (only where vllm and a GPU are present)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from standin_openai import StandinServer  # tests/standin_openai.py
from test_eval_metrics import BAD_STEP, GOOD, PROBLEM, WRONG

from prosfi.eval import evaluate
from prosfi.eval.generate import Generation
from prosfi.eval.judge import Judge, parse_verdict


def test_parse_verdict():
    assert parse_verdict("step 1 ok\nVERDICT: SOUND") is True
    assert parse_verdict("VERDICT: SOUND?\nno wait\nverdict: unsound") is False
    assert parse_verdict("I think it is fine") is None


def test_judge_soundness_through_an_endpoint(tmp_path):
    gens = [Generation("p1", i, t) for i, t in enumerate([GOOD, BAD_STEP, WRONG, "no format"])]
    replies = {"Alive rex": "s1 cites h1, h2 but concludes about rex.\nVERDICT: UNSOUND",
               "<answer>B": "The answer contradicts s1.\nVERDICT: UNSOUND",
               "Alive tom": "Each step follows.\nVERDICT: SOUND"}
    with StandinServer(replies) as server:
        judge = Judge(server.url, "judge-model", concurrency=2)
        result = evaluate([PROBLEM], gens, judge=judge, out_dir=tmp_path, n_boot=100, plots=False)
    prompts = [r["messages"][0]["content"] for r in server.requests]
    assert len(prompts) == 3  # the unformatted completion is not sent: it is unsound as it stands
    assert all("h1: ∀ x, Cat x → Alive x" in p and "VERDICT: SOUND" in p for p in prompts)
    assert [r["judge_sound"] for r in result.records] == [True, False, False, False]
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge"] == f"judge-model @ {server.url}"
    assert summary["overall"]["judge_soundness"] == 0.25
    assert "LLM judge: judge-model" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_wandb_offline_logs_the_summary(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    from prosfi.eval.wandb_log import log_summary

    run_dir = Path(__file__).parent / "fixtures" / "eval_runs" / "prosfi"
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    try:
        log_summary(summary, tmp_path, name="fixture")
    finally:
        wandb.teardown()  # wandb keeps the settings of its first run per process; later tests set their own
    files = [p for p in (tmp_path / "wandb").rglob("*.wandb")]
    assert files and files[0].stat().st_size > 0


@pytest.mark.vllm
@pytest.mark.gpu
def test_vllm_engine_generates_n_samples(tmp_path):
    from prosfi.cli import main
    from prosfi.eval import GenerationConfig, generate_vllm, load_source

    model = tmp_path / "tiny"
    assert main(["model", "tiny", "--out", str(model), "--corpus-problems", "60"]) == 0
    problems = load_source("kk:2", count=2).problems
    gens = generate_vllm(problems, str(model), GenerationConfig(n=2, temperature=1.0, max_new_tokens=8),
                         progress=False, engine_kwargs={"gpu_memory_utilization": 0.2, "enforce_eager": True})
    assert [(g.problem_id, g.sample) for g in gens] == [(p.id, k) for p in problems for k in range(2)]
    assert all(0 < g.tokens <= 8 for g in gens)
