"""Each framework's adapter called the way the framework's own source calls it, against `prosfi score`'s
rewards for the same completions (`score_problems` in-process: the `prosfi score` record builder).

Call sites reproduced (repository, path, commit as stored in the code index):
- verl `prime`: `verl/workers/reward_manager/prime.py` @ 12d74347 (`single_compute_score`,
  `parallel_compute_score_async`: a ProcessPoolExecutor, `partial(evaluation_func, task, completion,
  reference, task_extra_info)`, then a number or `float(result[0])`); the function is loaded by
  `verl/trainer/ppo/reward.py::get_custom_reward_fn` (`spec_from_file_location("custom_module", path)`,
  `sys.modules["custom_module"] = module`, `partial(_call_with_kwargs, raw_fn, reward_kwargs)`).
- verl `naive`: `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`, a dict's "score".
- verl `batch`: `verl/workers/reward_manager/batch.py` @ abddec4c (`compute_score(data_sources=,
  solution_strs=, ground_truths=, extra_infos=)`, numpy arrays from `non_tensor_batch`; a dict's "score").
- verl `main_eval`: `verl/trainer/main_eval.py` @ 2eaf97d7 (`process_item`: positional
  `reward_fn(data_source, r, ground_truth)`, then `np.mean`).
- OpenRLHF: `openrlhf/utils/agent.py` @ 04655bc3 (`SingleTurnAgentExecutor`: `query = hf_tokenizer.decode(
  observation_tokens, skip_special_tokens=False)` — the response's end-of-turn token kept; the `.py` form
  loaded by `spec_from_file_location("reward_func", path)` and run in `asyncio.to_thread(reward_func,
  queries, prompts, labels)`; HTTP: `{"query", "prompts", "labels"}` posted as JSON, `rewards` read).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import multiprocessing
import os
import pickle
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import httpx
import numpy as np
import pytest
from serve_support import completions, logic_problems, server, settings

from prosfi.data.problem import Problem
from prosfi.integrations.local import score_problems

pytestmark = pytest.mark.timeout(300)

VERL_FILE = os.path.join(os.path.dirname(importlib.util.find_spec("prosfi.integrations").origin), "verl.py")
OPENRLHF_FILE = os.path.join(os.path.dirname(VERL_FILE), "openrlhf.py")


@pytest.fixture(scope="module")
def data():
    problems = logic_problems()
    by_id = {p.id: p for p in problems}
    comps = [c for c in completions(problems) if isinstance(c.get("completion"), str) and c["problem_id"] in by_id]
    comps = comps[:10]
    gts = [json.dumps(by_id[c["problem_id"]].to_dict()) for c in comps]
    texts = [c["completion"] for c in comps]
    want = [r["reward"] for r in score_problems([by_id[c["problem_id"]] for c in comps], texts)]
    assert 1.0 in want and 0.0 in want
    return texts, gts, want


@pytest.fixture(scope="module")
def srv():
    with server(settings()) as (url, app):
        yield url, app


# --------------------------------------------------------------------------- verl, copied
def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def get_custom_reward_fn(file_path: str, function_name: str):  # verl/trainer/ppo/reward.py
    spec = importlib.util.spec_from_file_location("custom_module", file_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module"] = module
    spec.loader.exec_module(module)
    raw_fn = getattr(module, function_name)
    return partial(_call_with_kwargs, raw_fn, {})


async def single_compute_score(evaluation_func, completion, reference, task, task_extra_info, executor,
                               timeout=300.0):  # verl/workers/reward_manager/prime.py
    loop = asyncio.get_running_loop()
    try:
        future = loop.run_in_executor(executor, partial(evaluation_func, task, completion, reference, task_extra_info))
        return await asyncio.wait_for(future, timeout=timeout)
    except asyncio.TimeoutError:
        return None
    except Exception:
        return None


async def parallel_compute_score_async(evaluation_func, completions, references, tasks, extra_info=None,
                                       num_processes=64, mp_context=None, timeout=300.0):
    # verl/workers/reward_manager/prime.py; mp_context and timeout are ours (spawn: no inherited modules;
    # a shorter wait so that a hung child fails the test instead of stalling it)
    if extra_info is None:
        extra_info = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=num_processes, mp_context=mp_context) as executor:
        tasks_async = [single_compute_score(evaluation_func, c, r, t, ei, executor, timeout=timeout)
                       for c, r, t, ei in zip(completions, references, tasks, extra_info, strict=True)]
        results = await asyncio.gather(*tasks_async, return_exceptions=False)
    scores = []
    for result in results:
        if isinstance(result, Exception) or result is None:
            scores.append(0.0)
        elif isinstance(result, int | float | bool):
            scores.append(float(result))
        else:
            scores.append(float(result[0]))
    return scores


def _prime(name, texts, gts, mp_context=None, timeout=120.0):
    fn = get_custom_reward_fn(VERL_FILE, name)
    return asyncio.run(parallel_compute_score_async(fn, texts, gts, ["prosfi"] * len(texts), None, 2,
                                                    mp_context, timeout))


def test_verl_prime_pool_gets_prosfi_scores_rewards_fork_and_spawn(data, monkeypatch):
    texts, gts, want = data
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    with pytest.raises(KeyError):  # the dict entry is the wrong one for prime: verl zeroes the batch on this
        _prime_result = get_custom_reward_fn(VERL_FILE, "compute_score")("prosfi", texts[0], gts[0], None)
        float(_prime_result[0])
    fn = get_custom_reward_fn(VERL_FILE, "compute_score_float")
    assert pickle.loads(pickle.dumps(fn))("prosfi", texts[0], gts[0], None) == want[0]
    assert _prime("compute_score_float", texts, gts) == want  # fork (Linux default)
    assert _prime("compute_score_float", texts[:3], gts[:3], multiprocessing.get_context("spawn")) == want[:3]


def test_verl_prime_pool_forked_after_the_parent_scored_through_the_service(data, srv, monkeypatch):
    texts, gts, want = data
    url, app = srv
    monkeypatch.setenv("PROSFI_SERVE_URL", url)
    fn = get_custom_reward_fn(VERL_FILE, "compute_score_float")
    assert fn("prosfi", texts[0], gts[0], None) == want[0]  # the parent's client now has its loop thread
    assert _prime("compute_score_float", texts, gts, timeout=60.0) == want


def test_verl_naive_batch_and_main_eval_call_sites(data, srv, monkeypatch):
    texts, gts, want = data
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    naive = get_custom_reward_fn(VERL_FILE, "compute_score")
    got = [naive(data_source="prosfi", solution_str=t, ground_truth=g, extra_info={"index": i})
           for i, (t, g) in enumerate(zip(texts, gts))]
    assert [x["score"] for x in got] == want
    batch = get_custom_reward_fn(VERL_FILE, "compute_score_batch")
    scores = batch(data_sources=np.array(["prosfi"] * len(texts), dtype=object), solution_strs=texts,
                   ground_truths=gts, extra_infos=np.array([None] * len(texts), dtype=object))
    assert [s["score"] if isinstance(s, dict) else s for s in scores] == want
    reward_fn = get_custom_reward_fn(VERL_FILE, "compute_score_float")
    group = [i for i, g in enumerate(gts) if g == gts[0]]  # main_eval.process_item: one prompt's responses
    score_lst = [reward_fn("prosfi", texts[i], gts[0]) for i in group]
    assert len(group) > 1 and np.mean(score_lst) == pytest.approx(np.mean([want[i] for i in group]))
    monkeypatch.setenv("PROSFI_SERVE_URL", srv[0])
    assert [s["score"] for s in batch(data_sources=["prosfi"] * len(texts), solution_strs=texts,
                                      ground_truths=gts, extra_infos=None)] == want


def test_client_is_fork_safe_after_the_parent_scored(data, srv):
    from prosfi.serve.client import ProsfiClient

    texts, gts, want = data
    client = ProsfiClient(srv[0], retries=0)
    problem = json.loads(gts[0])
    body = [{"problem_id": problem["id"], "completion": texts[0]}]
    assert client.score_sync(body, [problem])[0]["reward"] == want[0]
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    child = ctx.Process(target=_child_scores, args=(client, body, [problem], q))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child waited on the parent's client thread"
    assert q.get(timeout=5) == want[0]
    client.close()


def _child_scores(client, body, problems, q):
    q.put(client.score_sync(body, problems)[0]["reward"])
    client.close()


# --------------------------------------------------------------------------- OpenRLHF, copied
def _queries(texts):
    prompt = "<|im_start|>user\nSolve it.<|im_end|>\n<|im_start|>assistant\n"
    return [prompt + t + "<|im_end|>" + ("<|endoftext|>" if i % 2 else "") for i, t in enumerate(texts)], \
        [prompt] * len(texts)


def test_openrlhf_queries_with_special_tokens_kept_file_form_and_http(data, srv, monkeypatch):
    texts, gts, want = data
    queries, prompts = _queries(texts)
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    spec = importlib.util.spec_from_file_location("reward_func", OPENRLHF_FILE)  # SingleTurnAgentExecutor
    reward_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reward_module)

    async def via_func():  # _fetch_rewards_via_func, batch_size 1
        return await asyncio.gather(*(asyncio.to_thread(reward_module.reward_func, [q], [p], [lab])
                                      for q, p, lab in zip(queries, prompts, gts)))

    infos = asyncio.run(via_func())
    assert [float(i.get("rewards")[0]) for i in infos] == pytest.approx(want)
    payload = {"query": queries, "prompts": prompts, "labels": gts}  # _fetch_rewards_via_http
    resp = httpx.post(srv[0] + "/openrlhf", json=payload, timeout=180)
    resp.raise_for_status()
    assert resp.json()["rewards"] == pytest.approx(want)


# --------------------------------------------------------------------------- NeMo-Gym /verify, errors
def _nemo_response(reasoning_item: dict, answer: str) -> dict:
    """An OpenAI Responses object as NeMo-Gym's resources servers receive it in `BaseVerifyRequest.response`:
    a reasoning item (NeMo-Gym's vLLM model server puts vLLM's `reasoning_content` in its `summary`; OpenAI
    models may leave `content` null) and then the assistant message with `output_text` parts."""
    return {"id": "resp_1", "object": "response", "created_at": 0, "model": "policy", "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
            "output": [{"id": "rs_1", "type": "reasoning", **reasoning_item},
                       {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": answer, "annotations": []}]}]}


def test_nemo_gym_verify_reads_reasoning_items_and_reasoning_content(data, srv):
    texts, gts, want = data
    k = want.index(1.0)
    think, rest = texts[k].split("</think>", 1)
    think = think.replace("<think>", "", 1)
    problem = json.loads(gts[k])
    bodies = [
        _nemo_response({"summary": [{"type": "summary_text", "text": think}], "content": None}, rest),
        _nemo_response({"summary": [], "content": [{"type": "reasoning_text", "text": think}]}, rest),
        _nemo_response({"summary": [], "content": None}, texts[k]),  # reasoning inline, empty reasoning item
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": rest, "reasoning_content": think}],
    ]
    for response in bodies:
        r = httpx.post(srv[0] + "/verify", json={"response": response, "problem": problem,
                                                 "responses_create_params": {"input": []}}, timeout=60)
        assert r.status_code == 200, r.text
        assert (r.json()["reward"], r.json()["format_ok"], r.json()["mask_sample"]) == (want[k], 1.0, False)


def _nemo_gym_converter(text: str) -> dict:
    """NeMo-Gym's vLLM model server on a completion (`responses_api_models/vllm_model/app.py`,
    `VLLMConverter._parse_think_tags` @ 3114ad99: `re.compile(r"<think>(.*?)</think>", re.DOTALL)`, every match
    one summary part of one reasoning item, the text with the matches removed the message)."""
    pattern = re.compile(r"<think>(.*?)</think>", re.DOTALL)
    blocks, rest = pattern.findall(text), pattern.sub("", text)
    return _nemo_response({"summary": [{"type": "summary_text", "text": b} for b in blocks], "content": None}, rest)


def test_nemo_gym_verify_scores_what_prosfi_score_scores_on_the_text_the_model_wrote(data, srv):
    """A second `<think>` block (before or after the answer) is a broken format for `prosfi score`; through
    the converter it arrives as a second summary part and must not be paid."""
    texts, gts, want = data
    k = want.index(1.0)
    think, rest = texts[k].split("</think>", 1)
    variants = [f"{think}</think><think>and again</think>{rest}", f"{texts[k]}<think>after the answer</think>",
                f"<think></think>{texts[k]}", f"{think}</think>{rest}\n<think>unclosed"]
    cases = [(t, g) for t, g in zip(texts, gts)] + [(v, gts[k]) for v in variants]
    problems = [Problem.from_dict(json.loads(g)) for _, g in cases]
    expect = [r["reward"] for r in score_problems(problems, [t for t, _ in cases])]
    assert expect[len(texts):] != [1.0] * len(variants) and 1.0 in expect
    got = []
    for text, g in cases:
        r = httpx.post(srv[0] + "/verify", json={"response": _nemo_gym_converter(text), "problem": json.loads(g),
                                                 "responses_create_params": {"input": []}}, timeout=60)
        assert r.status_code == 200, r.text
        got.append(r.json()["reward"])
    assert got == expect


def test_nemo_gym_verify_answers_a_base_verify_response(data, srv):
    """NeMo-Gym's `BaseVerifyResponse` is its `BaseVerifyRequest` (`responses_create_params`, `response`, a
    resources server's own fields) plus `reward`: the answer echoes the request, so no forwarding server is
    needed to build it."""
    texts, gts, want = data
    k = want.index(1.0)
    params = {"input": [{"role": "user", "content": "Solve it."}], "temperature": 1.0, "max_output_tokens": 512}
    response = _nemo_gym_converter(texts[k])
    body = {"responses_create_params": params, "response": response, "problem": json.loads(gts[k]),
            "task_tag": {"split": "train", "n": [1, 2]}}
    r = httpx.post(srv[0] + "/verify", json=body, timeout=60)
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["responses_create_params"], got["response"], got["task_tag"]) == (params, response, body["task_tag"])
    assert isinstance(got["reward"], float) and got["reward"] == want[k] and got["mask_sample"] is False
    assert "problem" not in got and "problem_id" not in got


@pytest.mark.parametrize("route,body", [
    ("/score", '{"completions": [{"problem_id": "\\ud800", "completion": "x"}]}'),
    ("/score", '{"problems": [], "completions": [{"problem_id": "a\\udfffb", "completion": "<think>\\ud800"}]}'),
    ("/check", '{"checks": [{"id": "\\ud800", "premises": {"h": "P a"}, "conclusion": "P a"}]}'),
    ("/verify", '{"response": "\\ud800", "problem_id": "\\udfff"}'),
    ("/openrlhf", '{"query": ["\\ud800"], "prompts": [""], "labels": ["\\ud800"]}'),
    ("/nope", '{}'),
])
def test_every_answer_to_a_lone_surrogate_is_json(srv, route, body):
    r = httpx.post(srv[0] + route, content=body.encode(), headers={"content-type": "application/json"}, timeout=60)
    assert r.status_code in (200, 404, 422), r.text
    data = json.loads(r.content)  # JSON whatever the status
    assert ("results" in data or "reward" in data) if r.status_code == 200 else set(data) == {"error", "field"}
    if route == "/score" and r.status_code == 200:
        assert data["results"][0]["problem_id"] == json.loads(body)["completions"][0]["problem_id"]


# --------------------------------------------------------------------------- TRL, reasoning parsed out
def test_trl_completions_parsed_by_a_response_schema_keep_their_think_block(data, srv):
    """TRL 1.16 parses a completion with the tokenizer's response schema (`trl/chat_template_utils.py`,
    `qwen3_schema["x-regex"]`) into `{"reasoning_content", "content"}`; the rewards must read the reasoning
    as the <think> block, in-process and through the service."""
    import re

    trl_utils = pytest.importorskip("trl.chat_template_utils")
    from prosfi.rewards import make_reward_funcs
    from prosfi.rewards.remote import RemoteProsfiReward
    from prosfi.verify.verifier import Verifier

    texts, gts, want = data
    pattern = re.compile(trl_utils.qwen3_schema["x-regex"], re.DOTALL)
    messages = []
    for t in texts:
        m = pattern.match(t + "<|im_end|>")
        assert m is not None, t[:80]
        message = {"role": "assistant", "content": m.group("content")}
        if m.group("reasoning_content"):
            message["reasoning_content"] = m.group("reasoning_content")
        messages.append([message])
    assert sum("reasoning_content" in m[0] for m in messages) >= len(messages) // 2
    with Verifier(workers=1) as v:
        local = make_reward_funcs("prosfi", verifier=v)[0](prompts=None, completions=messages, problem=gts)
    assert local == want
    remote = RemoteProsfiReward(srv[0])
    try:
        assert asyncio.run(remote(prompts=None, completions=messages, problem=gts)) == want
    finally:
        remote.close()
