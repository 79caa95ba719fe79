"""`prosfi serve`: the routes give exactly `prosfi score`'s records; contracts, limits, masking, dedup, load."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from serve_support import (
    CRASH,
    CRASH_TEXT,
    HANG,
    HANG_TEXT,
    completions,
    logic_problems,
    server,
    settings,
    write_jsonl,
)

from prosfi.cli import main
from prosfi.data.problem import write_problems

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def data():
    problems = logic_problems()
    return problems, completions(problems)


@pytest.fixture(scope="module")
def expected(data, tmp_path_factory):
    """The lines `prosfi score` writes for the same inputs (the reference)."""
    problems, comps = data
    d = tmp_path_factory.mktemp("score")
    write_problems(problems, d / "p.jsonl")
    write_jsonl(d / "c.jsonl", comps)
    assert main(["score", str(d / "p.jsonl"), str(d / "c.jsonl"), "-o", str(d / "out.jsonl"), "--workers", "1"]) == 0
    return [json.loads(x) for x in (d / "out.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def srv():
    with server(settings(max_batch=500, max_body_bytes=1 << 20)) as (url, app):
        yield url, app


def test_score_is_exactly_prosfi_score(srv, data, expected):
    url, _ = srv
    problems, comps = data
    r = httpx.post(url + "/score", json={"problems": [p.to_dict() for p in problems], "completions": comps},
                   timeout=120)
    assert r.status_code == 200
    assert r.json()["results"] == expected
    assert {x["reward"] for x in expected} >= {1.0, 0.3, 0.1, 0.0, None}  # every level is exercised


def test_openrlhf_verify_and_check_routes(srv, data, expected):
    url, _ = srv
    problems, comps = data
    by_id = {p.id: p for p in problems}
    rows = [(c, e) for c, e in zip(comps, expected) if c.get("problem_id") in by_id and isinstance(c.get("completion"), str)]
    prompt = "<|user|>solve<|assistant|>"
    body = {"query": [prompt + c["completion"] for c, _ in rows], "prompts": [prompt] * len(rows),
            "labels": [json.dumps(by_id[c["problem_id"]].to_dict()) for c, _ in rows]}
    out = httpx.post(url + "/openrlhf", json=body, timeout=120).json()
    assert out["rewards"] == [e["reward"] for _, e in rows]
    assert all(0.0 <= s <= 1.0 for s in out["scores"]) and out["extra_logs"]["prosfi/masked"] == [0.0] * len(rows)
    assert out["extra_logs"]["prosfi/chain_valid"] == [float(e["chain_valid"]) for _, e in rows]
    c, e = rows[0]
    v = httpx.post(url + "/verify", json={"response": {"output": [{"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": c["completion"]}]}]},
                   "problem": by_id[c["problem_id"]].to_dict()}, timeout=60).json()
    assert v["reward"] == e["reward"] and v["mask_sample"] is False and v["failure_kind"] is None
    checks = [{"id": "a", "premises": {"h1": "A", "h2": "A → B"}, "conclusion": "B"},
              {"id": "b", "premises": {"h1": "A"}, "conclusion": "B"}, {"id": "c", "premises": "x"}]
    got = httpx.post(url + "/check", json={"checks": checks}, timeout=60).json()["results"]
    assert [(g["id"], g["verdict"]) for g in got] == [("a", "valid"), ("b", "invalid"), ("c", "error")]
    metrics = httpx.get(url + "/metrics").text
    for name in ("prosfi_requests_total", "prosfi_verdicts_total", "prosfi_request_seconds_bucket",
                 "prosfi_queue_depth", "prosfi_cache_hit_rate", "prosfi_checks_total"):
        assert name in metrics


def test_bad_input_gets_the_right_status_and_the_server_keeps_serving(srv, data):
    url, _ = srv
    problems, _ = data
    p = problems[0].to_dict()
    cases = [
        (b"{not json", 400, None),
        (b"[" * 100 + b"]" * 100, 400, None),  # deep JSON
        (json.dumps({"completions": 3}).encode(), 422, "completions"),
        (json.dumps({"completions": [], "reward": "nope"}).encode(), 422, "reward"),
        (json.dumps({"completions": [], "chain": {"max_steps": "ten"}}).encode(), 422, "chain.max_steps"),
        (json.dumps({"completions": [], "chain": {"bogus": 1}}).encode(), 422, "chain.bogus"),
        (json.dumps({"completions": [], "problems": [{"id": "x"}]}).encode(), 422, "problems.0"),
        (json.dumps({"completions": [], "extra": 1}).encode(), 422, "extra"),
        (json.dumps({"completions": [{"problem_id": "x", "completion": "y"}] * 501}).encode(), 413, "completions"),
        (b" " * (2 << 20), 413, None),  # oversize body
    ]
    for raw, status, field in cases:
        r = httpx.post(url + "/score", content=raw, headers={"content-type": "application/json"}, timeout=60)
        assert r.status_code == status, (raw[:60], r.text)
        assert "error" in r.json() and r.json()["field"] == field
    # a mode whose completion format the service does not score (a whole Lean proof): refused by the format
    r = httpx.post(url + "/score", json={"completions": [], "reward": "direct_lean"})
    assert r.status_code == 422 and r.json()["field"] == "reward"
    assert r.json()["error"] == "reward: direct_lean is not served; use prosfi, outcome, step_fraction or format"
    r = httpx.post(url + "/openrlhf", json={"query": ["x"], "prompts": [""], "labels": ["no-such-id"]})
    assert r.status_code == 422 and r.json()["field"] == "labels.0"
    # a label is a JSON string the body's depth bound does not see into: deep nesting inside it is a 422
    deep = "{" + '"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = httpx.post(url + "/openrlhf", json={"query": ["x"], "prompts": [""], "labels": [deep]}, timeout=60)
    assert r.status_code == 422 and r.json()["field"] == "labels.0" and "not a JSON problem" in r.json()["error"]
    r = httpx.post(url + "/verify", json={"response": "x"})
    assert r.status_code == 422 and r.json()["field"] == "problem"
    # an unknown problem id in /score is a record with a reason, exactly as in `prosfi score`
    r = httpx.post(url + "/score", json={"problems": [p], "completions": [{"problem_id": "zzz", "completion": "x"}]})
    assert r.status_code == 200 and r.json()["results"][0]["reason"] == "line 1: unknown problem_id 'zzz'"
    assert httpx.get(url + "/health").json()["status"] == "ok"


def test_token_is_required_when_set(data):
    problems, comps = data
    with server(settings(token="s3cret")) as (url, _):
        body = {"problems": [problems[0].to_dict()], "completions": comps[:1]}
        assert httpx.post(url + "/score", json=body).status_code == 401
        assert httpx.post(url + "/score", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(url + "/metrics").status_code == 401
        assert httpx.get(url + "/health").status_code == 200
        ok = httpx.post(url + "/score", json=body, headers={"Authorization": "Bearer s3cret"}, timeout=60)
        assert ok.status_code == 200 and ok.json()["results"][0]["reward"] == 1.0


def test_a_retried_request_is_scored_once(srv, data):
    url, app = srv
    problems, comps = data
    body = {"problems": [p.to_dict() for p in problems], "completions": comps[:8]}
    before = app.state.engine.scored

    async def go():
        async with httpx.AsyncClient(timeout=60) as c:
            hdr = {"Idempotency-Key": "k-123"}
            return await asyncio.gather(*(c.post(url + "/score", json=body, headers=hdr) for _ in range(3)))

    answers = asyncio.run(go())
    assert {a.status_code for a in answers} == {200}
    assert answers[0].json() == answers[1].json() == answers[2].json()
    scored = sum(1 for x in answers[0].json()["results"] if x["reward"] is not None)
    assert app.state.engine.scored - before == scored  # three requests, one scoring
    again = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "k-123"}, timeout=60)
    assert again.json() == answers[0].json() and app.state.engine.scored - before == scored


def test_load_200_concurrent_clients(srv, data, expected):
    """200 clients x 2 requests: no 5xx, every completion answered once, rewards as `prosfi score`'s."""
    url, app = srv
    problems, comps = data
    ref = {json.dumps(c, sort_keys=True): e for c, e in zip(comps, expected)}
    pdicts = {p.id: p.to_dict() for p in problems}
    before = app.state.engine.scored

    async def client(k: int, c: httpx.AsyncClient) -> list:
        got = []
        for r in range(2):
            part = [comps[(k * 2 + r + j) % len(comps)] for j in range(1 + (k + r) % 3)]
            ps = [pdicts[x["problem_id"]] for x in part if x.get("problem_id") in pdicts]
            resp = await c.post(url + "/score", json={"problems": ps, "completions": part})
            got.append((resp.status_code, part, resp.json()))
        return got

    async def go():
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(timeout=120, limits=limits) as c:
            return await asyncio.gather(*(client(k, c) for k in range(200)))

    sent = answered = valid = 0
    for got in asyncio.run(go()):
        for status, part, body in got:
            assert status == 200
            sent += len(part)
            answered += len(body["results"])
            for c, res in zip(part, body["results"]):
                want = dict(ref[json.dumps(c, sort_keys=True)])
                assert res["reward"] == want["reward"] and res["steps"] == want["steps"]
                valid += res["reward"] is not None or "unknown problem" not in res["reason"] and \
                    "no 'completion'" not in res["reason"]
    assert answered == sent
    assert app.state.engine.scored - before == valid  # each scorable completion exactly once
    assert app.state.metrics.value("prosfi_requests_total", route="/score", status="500") == 0


def test_a_verifier_worker_killed_mid_batch_is_masked_not_scored(data, expected):
    problems, comps = data
    with server(settings(backends=("prosfi.verify.testing:FaultBackend", "z3"))) as (url, app):
        golds = [c for c, e in zip(comps, expected) if e["reward"] == 1.0][:6]
        batch = golds[:3] + [{"problem_id": CRASH.id, "completion": CRASH_TEXT}] + golds[3:]
        body = {"problems": [p.to_dict() for p in problems] + [CRASH.to_dict()], "completions": batch}
        res = httpx.post(url + "/score", json=body, timeout=120).json()
        rewards = [x["reward"] for x in res["results"]]
        assert rewards == [1.0] * 3 + [None] + [1.0] * 3
        crashed = res["results"][3]
        assert crashed["masked"] is True and crashed["failure_kind"] == "worker_died" and res["masked"] == 1
        assert app.state.metrics.value("prosfi_masked_total", kind="worker_died") == 1
        v = httpx.post(url + "/verify", json={"response": CRASH_TEXT, "problem": CRASH.to_dict()}, timeout=60).json()
        assert v["mask_sample"] is True and v["failure_kind"] == "worker_died" and v["reward"] == 0.0
        o = httpx.post(url + "/openrlhf", json={"query": [CRASH_TEXT], "prompts": [""],
                                                 "labels": [CRASH.to_dict()]}, timeout=60).json()
        assert o["extra_logs"]["prosfi/masked"] == [1.0] and o["failures"][0]["failure_kind"] == "worker_died"
        again = httpx.post(url + "/score", json={"problems": body["problems"], "completions": golds}, timeout=60)
        assert [x["reward"] for x in again.json()["results"]] == [1.0] * len(golds)  # the pool recovered


def test_queue_timeout_and_overload_are_masked(data):
    problems, comps = data
    p = problems[0].to_dict()
    one = [c for c in comps if c.get("problem_id") == p["id"]][:1]
    with server(settings(queue_timeout_s=1e-6, batch_window_ms=20.0, max_queue=2)) as (url, app):
        res = httpx.post(url + "/score", json={"problems": [p], "completions": one}, timeout=60).json()["results"]
        assert res[0]["masked"] is True and res[0]["failure_kind"] == "queue_timeout" and res[0]["reward"] is None
        v = httpx.post(url + "/verify", json={"response": one[0]["completion"], "problem": p}, timeout=60).json()
        assert v["mask_sample"] is True and v["failure_kind"] == "queue_timeout"
        r = httpx.post(url + "/score", json={"problems": [p], "completions": one * 3}, timeout=60)
        assert r.status_code == 429
        assert app.state.metrics.value("prosfi_masked_total", kind="queue_timeout") == 2
        assert app.state.metrics.value("prosfi_rejected_total", why="overloaded") == 1


@pytest.mark.parametrize("argv, needle", [
    (["--data", "no/such/file.jsonl"], "--data"),
    (["--max-batch", "0"], "max_batch"),
    (["--replicas", "0"], "--replicas"),
    (["--backends", "nosuch"], "nosuch"),
])
def test_serve_usage_errors_are_one_line(argv, needle, capsys):
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("prosfi serve:") and needle in err


def test_the_command_serves_and_stops_cleanly_on_ctrl_c(tmp_path, data):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from prosfi.serve.runner import free_port

    problems, comps = data
    write_problems(problems[:2], tmp_path / "p.jsonl")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "prosfi", "serve", "--port", str(port), "--workers", "1",
                             "--data", str(tmp_path / "p.jsonl")], env=env, stderr=subprocess.PIPE, text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
        while True:
            try:
                health = httpx.get(url + "/health", timeout=1).json()
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert health["problems"] == 2
        # preloaded problems are named by id only
        body = {"completions": [c for c in comps if c.get("problem_id") == problems[0].id][:1]}
        assert httpx.post(url + "/score", json=body, timeout=60).json()["results"][0]["reward"] == 1.0
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err and "2 preloaded problem(s)" in err  # as Ctrl-C elsewhere
    assert err.strip().splitlines()[-1] == "prosfi serve: interrupted"


def test_time_limits_start_when_a_check_starts_not_when_it_is_queued(data, expected):
    """Requests queued behind a check that hangs until the pool kills it still get their own full time limit:
    their steps are proved (valid), not timed out, though they waited longer than the limit."""
    problems, comps = data
    golds = [c for c, e in zip(comps, expected) if e["reward"] == 1.0][:4]
    st = settings(backends=("prosfi.verify.testing:FaultBackend", "z3"), timeout_ms=300)
    with server(st) as (url, app):
        pdicts = [p.to_dict() for p in problems] + [HANG.to_dict()]

        async def go():
            async with httpx.AsyncClient(timeout=120) as c:
                first = asyncio.create_task(c.post(url + "/score", json={
                    "problems": pdicts, "completions": [{"problem_id": HANG.id, "completion": HANG_TEXT}]}))
                await asyncio.sleep(0.3)  # the hanging check is running; these queue behind it
                rest = await asyncio.gather(*(c.post(url + "/score", json={"problems": pdicts, "completions": [g]})
                                              for g in golds))
                return await first, rest

        first, rest = asyncio.run(go())
        hung = first.json()["results"][0]
        assert hung["reward"] == 0.3 and hung["steps"][0]["verdict"] == "unknown" and not hung.get("masked")
        assert "timeout" in hung["steps"][0]["reason"]
        assert [r.json()["results"][0]["reward"] for r in rest] == [1.0] * len(golds)
        assert app.state.metrics.value("prosfi_worker_restarts") == 1  # the hang was killed at its own limit


def test_depth_bound_matches_the_nesting_of_any_json():
    from hypothesis import given
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st

    from prosfi.serve.app import _depth

    def nesting(v) -> int:
        if isinstance(v, (list, dict)):
            items = v.values() if isinstance(v, dict) else v
            return 1 + max((nesting(x) for x in items), default=0)
        return 0

    values = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner,
                                                                                        max_size=3), max_leaves=30)

    @hsettings(max_examples=200, deadline=None)
    @given(values, st.integers(min_value=1, max_value=6))
    def check(value, limit):
        assert _depth(value, limit) == (nesting(value) <= limit)

    check()
