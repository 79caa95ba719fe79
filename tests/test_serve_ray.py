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
    finally:
        ray_app.shutdown()


def _sample(text: str, name: str, labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(f"{name}{{") and all(part in line for part in labels.split(",")):
            return float(line.rsplit(" ", 1)[1])
    return 0.0
