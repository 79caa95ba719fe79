"""The client (shards, retries, idempotency keys, restarts) and the framework adapters over a live server:
TRL remote reward, verl compute_score (local and remote), OpenRLHF reward_func."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from fastapi import FastAPI, Request
from serve_support import completions, logic_problems, server, settings

from prosfi.rewards import make_reward_funcs
from prosfi.rewards.remote import MASKED_METRIC, RemoteProsfiReward
from prosfi.serve.client import ClientError, ProsfiClient
from prosfi.serve.runner import free_port, running
from prosfi.verify.verifier import Verifier

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def data():
    problems = logic_problems()
    comps = [c for c in completions(problems) if isinstance(c.get("completion"), str) and c["problem_id"] != "nope"]
    return problems, comps


@pytest.fixture(scope="module")
def local(data):
    """In-process rewards (prosfi's own TRL reward function) for the same completions."""
    problems, comps = data
    by_id = {p.id: p for p in problems}
    with Verifier(workers=1) as v:
        fn = make_reward_funcs("prosfi", verifier=v)[0]
        logged: dict = {}
        rewards = fn(prompts=None, completions=[c["completion"] for c in comps],
                     problem=[json.dumps(by_id[c["problem_id"]].to_dict()) for c in comps],
                     log_metric=lambda k, x: logged.__setitem__(k, x))
    return rewards, logged


@pytest.fixture(scope="module")
def two_servers():
    with server(settings()) as a, server(settings()) as b:
        yield a, b


def test_client_shards_across_urls_in_order(two_servers, data, local):
    (u1, app1), (u2, app2) = two_servers
    problems, comps = data
    client = ProsfiClient([u1, u2])
    try:
        records = client.score_sync(comps, [p.to_dict() for p in problems])
    finally:
        client.close()
    assert [r["reward"] for r in records] == local[0]
    assert app1.state.engine.scored > 0 and app2.state.engine.scored > 0
    assert app1.state.engine.scored + app2.state.engine.scored == len(comps)


def test_trl_remote_reward_matches_the_local_one(two_servers, data, local):
    (u1, _), (u2, _) = two_servers
    problems, comps = data
    by_id = {p.id: p for p in problems}
    fn = RemoteProsfiReward(f"{u1},{u2}")
    assert fn.__name__ == "prosfi_reward"
    logged: dict = {}
    rewards = asyncio.run(fn(prompts=None, completions=[[{"role": "assistant", "content": c["completion"]}]
                                                       for c in comps],
                             problem=[json.dumps(by_id[c["problem_id"]].to_dict()) for c in comps],
                             log_metric=lambda k, x: logged.__setitem__(k, x), log_extra=lambda k, v: None))
    fn.close()
    assert rewards == local[0]
    assert set(logged) == set(local[1]) | {MASKED_METRIC} and logged[MASKED_METRIC] == 0.0
    for k in ("prosfi/format_rate", "prosfi/answer_accuracy", "prosfi/chain_valid_rate"):
        assert logged[k] == pytest.approx(local[1][k])


def test_verl_and_openrlhf_adapters_local_and_remote(two_servers, data, local, monkeypatch):
    from prosfi.integrations import openrlhf, verl

    (u1, _), _ = two_servers
    problems, comps = data
    by_id = {p.id: p for p in problems}
    gts = [json.dumps(by_id[c["problem_id"]].to_dict()) for c in comps[:12]]
    texts = [c["completion"] for c in comps[:12]]
    want = local[0][:12]
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    got_local = [verl.compute_score("kk", t, g) for t, g in zip(texts, gts)]
    assert [x["score"] for x in got_local] == want
    assert all(set(x) == {"score", "format_ok", "answer_correct", "chain_valid", "verified_fraction", "masked"}
               for x in got_local)
    o = openrlhf.reward_func(["P" + t for t in texts], ["P"] * len(texts), gts)
    assert o["rewards"].tolist() == pytest.approx(want)
    monkeypatch.setenv("PROSFI_SERVE_URL", u1)
    got_remote = verl.compute_score_batch(["kk"] * len(texts), texts, gts)
    assert got_remote == got_local
    assert verl.compute_score("kk", texts[0], gts[0]) == got_local[0]
    o2 = openrlhf.reward_func(["P" + t for t in texts], ["P"] * len(texts), gts)
    assert o2["rewards"].tolist() == o["rewards"].tolist()


def test_retries_keep_one_idempotency_key_and_4xx_raises():
    seen: list = []
    stub = FastAPI()

    @stub.post("/score")
    async def flaky(request: Request):
        seen.append(request.headers.get("idempotency-key"))
        from fastapi.responses import JSONResponse

        if len(seen) < 3:
            return JSONResponse({"error": "busy"}, status_code=503 if len(seen) == 1 else 429)
        body = await request.json()
        if body.get("reward") == "bad":
            return JSONResponse({"error": "reward: bad", "field": "reward"}, status_code=422)
        return {"results": [{"reward": 0.5} for _ in body["completions"]]}

    with running(stub) as url:
        client = ProsfiClient(url, backoff_s=0.01, retries=4)
        try:
            out = client.score_sync([{"problem_id": "a", "completion": "x"}] * 2)
            assert out == [{"reward": 0.5}] * 2
            assert len(seen) == 3 and len(set(seen)) == 1 and client.stats["retries"] == 2
            with pytest.raises(ClientError) as err:
                client.score_sync([{"problem_id": "a", "completion": "x"}], reward="bad")
            assert err.value.status == 422
        finally:
            client.close()


def test_unreachable_service_is_masked_and_trl_gets_none(data):
    problems, comps = data
    dead = f"http://127.0.0.1:{free_port()}"
    client = ProsfiClient(dead, retries=2, backoff_s=0.01)
    try:
        out = client.score_sync(comps[:3], [p.to_dict() for p in problems])
    finally:
        client.close()
    assert [r["masked"] for r in out] == [True] * 3 and out[0]["failure_kind"] == "unavailable"
    assert client.stats["masked"] == 3
    fn = RemoteProsfiReward(dead, retries=1)
    fn.client.backoff_s = 0.01
    logged: dict = {}
    by_id = {p.id: p for p in problems}
    rewards = asyncio.run(fn(completions=[c["completion"] for c in comps[:2]],
                             problem=[json.dumps(by_id[c["problem_id"]].to_dict()) for c in comps[:2]],
                             log_metric=lambda k, x: logged.__setitem__(k, x)))
    fn.close()
    assert rewards == [None, None] and logged[MASKED_METRIC] == 1.0


def test_server_restarted_while_the_client_retries(data, local):
    """The client retries through a server that is down, then up: nothing lost, nothing scored twice."""
    problems, comps = data
    port = free_port()
    client = ProsfiClient(f"http://127.0.0.1:{port}", retries=30, backoff_s=0.05, max_backoff_s=0.3)
    result: dict = {}

    def call():
        result["records"] = client.score_sync(comps, [p.to_dict() for p in problems])

    with server(settings(), port=port):
        pass  # up, then down: the client starts while nothing listens
    t = threading.Thread(target=call)
    t.start()
    try:
        time.sleep(0.5)
        with server(settings(), port=port) as (_, second):
            t.join(120)
            assert not t.is_alive()
            assert second.state.engine.scored == len(comps)
    finally:
        t.join(5)
        client.close()
    assert [r["reward"] for r in result["records"]] == local[0]
    assert client.stats["retries"] >= 1


def test_remote_reward_is_picklable():
    import pickle

    fn = RemoteProsfiReward("http://127.0.0.1:1", mode="outcome", chain={"max_steps": 10})
    _ = fn.client
    again = pickle.loads(pickle.dumps(fn))
    assert again.__name__ == "outcome_reward" and again._client is None and again.chain == {"max_steps": 10}


def test_recipe_reward_url_gives_the_remote_reward(tmp_path):
    from types import SimpleNamespace

    from prosfi.train.config import ProsfiScriptArguments
    from prosfi.train.grpo import make_rewards

    assert "reward_url" in ProsfiScriptArguments.__dataclass_fields__
    script = SimpleNamespace(reward_url="http://rm:8000,http://rm2:8000", reward_mode="step_fraction", audit_path=None)
    (fn,) = make_rewards(script, SimpleNamespace(output_dir=str(tmp_path)), verifier=None)
    assert isinstance(fn, RemoteProsfiReward) and fn.__name__ == "step_fraction_reward"
    assert fn.client.urls == ["http://rm:8000", "http://rm2:8000"]
    fn.close()
