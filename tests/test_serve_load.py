"""The server at training scale: the idempotency store is bounded by bytes, easy requests do not wait behind
hard ones, and the queue timeout bounds a request's latency."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from serve_support import logic_problems, server, settings

from prosfi.data.gold import gold_completion

pytestmark = pytest.mark.timeout(300)


def _metric(url: str, name: str) -> float:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{}"):
            return float(line.split()[-1])
    return 0.0


def test_idempotency_store_is_bounded_by_bytes_and_still_replays_recent_keys():
    p = logic_problems()[0]
    comp = {"problem_id": p.id, "completion": gold_completion(p)}
    body = {"problems": [p.to_dict()], "completions": [comp] * 40}
    with server(settings(idempotency_bytes=100_000)) as (url, app):
        eng = app.state.engine
        sizes = []
        for k in range(30):
            r = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": f"k{k}"}, timeout=60)
            assert r.status_code == 200
            sizes.append(len(r.content))
            assert eng.replies.bytes <= 100_000
        assert sum(sizes) > 3 * 100_000  # the answers would not have fitted
        kept = _metric(url, "prosfi_idempotency_bytes")
        assert 0 < kept <= 100_000 and kept == eng.replies.bytes
        scored = eng.scored
        again = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "k29"}, timeout=60)
        assert again.content == r.content and eng.scored == scored  # the newest is replayed, not rescored
        httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "k0"}, timeout=60)
        assert eng.scored == scored + 40  # the oldest was forgotten: scored again
    with server(settings(idempotency_bytes=1000)) as (url, app):  # larger than the store: sent, not kept
        r = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "big"}, timeout=60)
        assert r.status_code == 200 and len(r.content) > 1000 and app.state.engine.replies.bytes == 0


FAULT = "prosfi.verify.testing:FaultBackend"
OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}


def _problem(pid: str, premises: list[str], goal: str):
    from prosfi.data.problem import Problem

    return Problem.from_dict({"id": pid, "kind": "true_false_uncertain", "goal": goal, "options": OPTIONS,
                              "answer": "A", "premises": [{"id": f"h{i + 1}", "formal": f}
                                                          for i, f in enumerate(premises)]})


def _text(conclusions: list[str], deps=("h1", "h2")) -> str:
    steps = [{"id": f"s{i + 1}", "dependencies": list(deps), "conclusion": c, "rule": "mp"}
             for i, c in enumerate(conclusions)]
    return f"<think>t</think><steps>{json.dumps(steps)}</steps><answer>A</answer>"


# FaultBackend: `Slow x` takes the whole per-check time limit (then unknown); anything else is answered at
# once (`unknown`, "not a premise")
HARD = _problem("hard-1", ["∀ x, Cat x → Slow x", "Cat tom"], "Slow tom")
EASY = _problem("easy-1", ["Cat tom", "Dog rex"], "Cat tom")


async def _timed(client, url, body):
    t0 = time.perf_counter()
    r = await client.post(url + "/score", json=body, timeout=120)
    return time.perf_counter() - t0, time.perf_counter(), r.json()


def test_an_easy_request_does_not_wait_behind_hard_ones():
    hard = {"problems": [HARD.to_dict()], "completions": [
        {"problem_id": HARD.id, "completion": _text(["Slow tom"] * 1 + [f"Slow t{k}" for k in range(3)])}
        for _ in range(2)]}
    easy = {"problems": [EASY.to_dict()], "completions": [{"problem_id": EASY.id, "completion": _text(["Cat tom ∧ Dog rex"])}]}

    async def scenario(url):
        async with httpx.AsyncClient() as client:
            h = asyncio.create_task(_timed(client, url, hard))
            await asyncio.sleep(0.5)  # the hard pass holds the only worker now
            e = await _timed(client, url, easy)
            return e, await h

    with server(settings(backends=(FAULT,), timeout_ms=1500)) as (url, app):  # one worker, one spare
        (e_s, e_end, e_json), (h_s, h_end, h_json) = asyncio.run(scenario(url))
    assert e_json["results"][0]["steps"][0]["reason"] == "fault: not a premise"  # the backend answered it
    assert [s["verdict"] for s in h_json["results"][0]["steps"]][:1] == ["unknown"]
    assert e_end < h_end  # answered while the hard request was still being scored
    assert app.state.metrics.value("prosfi_verifier_passes_total") == 2


def test_the_queue_timeout_bounds_latency_while_a_pass_runs():
    slow = {"problems": [HARD.to_dict()], "completions": [{"problem_id": HARD.id, "completion": _text(["Slow tom"])}]}
    with server(settings(backends=(FAULT,), timeout_ms=20_000, queue_timeout_s=0.5)) as (url, app):
        t0 = time.perf_counter()
        r = httpx.post(url + "/score", json=slow, timeout=60).json()["results"][0]
        took = time.perf_counter() - t0
    assert r["masked"] is True and r["failure_kind"] == "queue_timeout" and r["reward"] is None
    assert took < 20.0  # answered before its one check could have ended (20 s limit)


def test_sigterm_lets_a_request_in_flight_finish(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    from prosfi.serve.runner import free_port

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "prosfi", "serve", "--port", str(port), "--workers", "1",
                             "--backends", FAULT, "--no-truth-table", "--timeout-ms", "7000"],
                            env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    slow = {"problems": [HARD.to_dict()], "completions": [{"problem_id": HARD.id, "completion": _text(["Slow tom"])}]}
    out: dict = {}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/health", timeout=1)
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        t = threading.Thread(target=lambda: out.setdefault("r", httpx.post(url + "/score", json=slow, timeout=60)))
        t.start()
        time.sleep(1.0)  # the request is being scored (its one check takes 7 s, past uvicorn's usual 5 s)
        proc.send_signal(signal.SIGTERM)
        t.join(60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    r = out["r"]
    assert r.status_code == 200, r.text
    assert r.json()["results"][0]["steps"][0]["reason"].startswith("fault: slow")  # scored, not cut
    assert "Traceback" not in err
