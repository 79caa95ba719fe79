"""`prosfi serve --ray`: the same app as Ray Serve replicas on a local Ray; a replica killed under load."""

from __future__ import annotations

import threading
import time

import pytest
from serve_support import completions, logic_problems, settings

from prosfi.rewards import score_batch
from prosfi.serve.client import ProsfiClient
from prosfi.serve.runner import free_port
from prosfi.verify.verifier import Verifier

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_replicas_score_like_in_process_and_survive_a_killed_replica():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.serve")
    from prosfi.serve import ray_app

    problems = logic_problems()
    by_id = {p.id: p for p in problems}
    comps = [c for c in completions(problems) if isinstance(c.get("completion"), str) and c["problem_id"] in by_id]
    with Verifier(workers=1) as v:
        want = [r.reward for r in score_batch([by_id[c["problem_id"]] for c in comps],
                                              [c["completion"] for c in comps], v)]
    st = settings(port=free_port(), batch_window_ms=400.0)  # requests wait in the replica: the kill hits them
    url = ray_app.start(st, replicas=2, num_cpus=2, cpus_per_replica=0.5)
    client = ProsfiClient(url, retries=30, backoff_s=0.1, max_backoff_s=1.0, shard_size=3)
    try:
        pdicts = [p.to_dict() for p in problems]
        assert [r["reward"] for r in client.score_sync(comps, pdicts)] == want
        replicas = [a for a in ray.util.list_named_actors(all_namespaces=True) if "SERVE_REPLICA" in a["name"]]
        assert len(replicas) == 2
        out: dict = {}
        t = threading.Thread(target=lambda: out.setdefault("records", client.score_sync(comps * 2, pdicts)))
        t.start()
        time.sleep(0.2)  # the shards have reached both replicas and wait in their scorers' windows
        victim = ray.get_actor(replicas[0]["name"], namespace=replicas[0]["namespace"])
        ray.kill(victim, no_restart=False)  # Ray Serve replaces it; requests in flight fail and are retried
        t.join(240)
        assert not t.is_alive()
        records = out["records"]
        assert client.stats["retries"] >= 1  # the kill cut requests in flight; the client sent them again
        assert len(records) == len(comps) * 2  # nothing lost
        masked = [r for r in records if r.get("masked")]
        assert len(masked) == client.stats["masked"]  # counted
        assert [r["reward"] for r in records if not r.get("masked")] == \
            [w for w, r in zip(want * 2, records) if not r.get("masked")]
    finally:
        client.close()
        ray_app.shutdown()


def test_replicas_share_idempotency_and_metrics():
    pytest.importorskip("ray.serve")
    import httpx

    from prosfi.serve import ray_app

    p = logic_problems()[0]
    body = {"problems": [p.to_dict()], "completions": [c for c in completions([p])
                                                      if isinstance(c.get("completion"), str)][:3]}
    st = settings(port=free_port())
    url = ray_app.start(st, replicas=2, num_cpus=2, cpus_per_replica=0.5)
    try:
        answers = set()
        with httpx.Client(timeout=120) as http:
            for _ in range(10):  # one key, ten times: the proxy spreads them over both replicas
                r = http.post(url + "/score", json=body, headers={"Idempotency-Key": "same-key"})
                assert r.status_code == 200
                answers.add(r.content)
            time.sleep(2.5)  # every replica has pushed its metrics since
            scrapes = []
            for _ in range(6):  # each scrape lands on a random replica: all show the whole service
                text = http.get(url + "/metrics").text
                scrapes.append(_sample(text, "prosfi_completions_scored_total", 'mode="prosfi"'))
            requests = _sample(http.get(url + "/metrics").text, "prosfi_requests_total",
                               'route="/score",status="200"')
        assert len(answers) == 1
        assert scrapes == [3.0] * 6  # scored once, on one replica, counted in every scrape
        assert requests == 10.0  # the requests of both replicas, summed
        assert _listening_beyond_loopback() == []  # --host 127.0.0.1: Ray's own ports too
    finally:
        ray_app.shutdown()


def _listening_beyond_loopback() -> list:
    """(address, port, process) of every listening socket of this process and the processes it started
    (Ray's GCS, raylet, workers, agents, proxy) that is not on a loopback address."""
    import ipaddress
    import os

    psutil = pytest.importorskip("psutil")
    me = psutil.Process(os.getpid())
    pids = {me.pid} | {p.pid for p in me.children(recursive=True)}
    out = []
    for c in psutil.net_connections(kind="inet"):
        if c.status != psutil.CONN_LISTEN or c.pid not in pids:
            continue
        ip = ipaddress.ip_address(c.laddr.ip)
        mapped = getattr(ip, "ipv4_mapped", None)
        if not (mapped or ip).is_loopback:
            out.append((c.laddr.ip, c.laddr.port, c.pid))
    return out


def _sample(text: str, name: str, labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(f"{name}{{") and all(part in line for part in labels.split(",")):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_sigterm_lets_ray_replicas_finish_a_request_in_flight():
    pytest.importorskip("ray.serve")
    import json
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import httpx

    from prosfi.data.problem import Problem

    fault = "prosfi.verify.testing:FaultBackend"
    hard = Problem.from_dict({"id": "hard-1", "kind": "true_false_uncertain", "goal": "Slow tom", "answer": "A",
                              "options": {"A": "True", "B": "False", "C": "Uncertain"},
                              "premises": [{"id": "h1", "formal": "∀ x, Cat x → Slow x"},
                                           {"id": "h2", "formal": "Cat tom"}]})
    steps = [{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Slow tom", "rule": "mp"}]
    body = {"problems": [hard.to_dict()], "completions": [
        {"problem_id": hard.id, "completion": f"<think>t</think><steps>{json.dumps(steps)}</steps><answer>A</answer>"}]}
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "prosfi", "serve", "--ray", "--replicas", "1", "--port", str(port),
                             "--cpus-per-replica", "0.5", "--workers", "1", "--backends", fault, "--no-truth-table",
                             "--timeout-ms", "6000"], env=env, stderr=subprocess.PIPE, text=True)
    url, out = f"http://127.0.0.1:{port}", {}
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
        t = threading.Thread(target=lambda: out.setdefault("r", httpx.post(url + "/score", json=body, timeout=120)))
        t.start()
        time.sleep(1.5)  # being scored: its one check takes 6 s
        proc.send_signal(signal.SIGTERM)
        t.join(120)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
    r = out["r"]
    assert r.status_code == 200, r.text
    assert r.json()["results"][0]["steps"][0]["reason"].startswith("fault: slow")
