"""The PrimeIntellect `verifiers` taskset (skipped where `verifiers` is not installed), scored through the
library's own scoring call: a rollout ends with `await self.task.score(trace, runtime)`
(verifiers 0.4.0, `verifiers/v1/rollout.py` line 614; `verifiers/v1/cli/replay.py` line 164 calls
`task.score(trace)`), which runs the task's `@reward` hooks and records them on the trace. The trace is
built as `Rollout.__init__` builds it (`verifiers/v1/rollout.py` lines 120-131)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("verifiers.v1")

from serve_support import server, settings
from verifiers.v1.configs.agent import AgentConfig
from verifiers.v1.graph import MessageNode
from verifiers.v1.state import state_cls
from verifiers.v1.trace import AgentInfo, Trace, TraceTask
from verifiers.v1.types import AssistantMessage, UserMessage

from prosfi.data.gold import gold_completion
from prosfi.data.problem import Problem
from prosfi.integrations.local import score_problems
from prosfi.integrations.verifiers import ProsfiTaskConfig, ProsfiTaskset, ProsfiTasksetConfig


def _trace(task, content: str, reasoning: str | None = None) -> Trace:
    trace = Trace(task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
                  state=state_cls(type(task))(), agent=AgentInfo(config=AgentConfig()))
    trace.nodes.append(MessageNode(message=UserMessage(content=task.data.prompt)))
    trace.nodes.append(MessageNode(parent=0, sampled=True,
                                   message=AssistantMessage(content=content, reasoning_content=reasoning)))
    return trace


def _score(task, trace) -> Trace:
    asyncio.run(task.score(trace, None))  # what Rollout.close does (runtime None: no sandbox)
    return trace


def test_rollout_scoring_gives_prosfi_scores_rewards_in_process_and_remote(monkeypatch):
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    tasks = list(ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2"], count=2)))
    assert len(tasks) == 2 and tasks[0].data.prompt and tasks[0].data.problem["id"].startswith("kk-2")
    problem = Problem.from_dict(tasks[0].data.problem)
    gold = gold_completion(problem)
    wrong = gold.replace("<answer>", "<answer>not ")
    expected = [r["reward"] for r in score_problems([problem] * 3, [gold, wrong, "no tags"])]
    assert expected[0] == 1.0 and expected[2] == 0.0

    got = [_score(tasks[0], _trace(tasks[0], text)) for text in (gold, wrong, "no tags")]
    assert [t.rewards["prosfi"].score for t in got] == expected
    assert got[0].metrics["prosfi/chain_valid"] == 1.0 and got[0].reward == 1.0

    # reasoning a vLLM reasoning parser moved to `reasoning_content` is the <think> block
    think, rest = gold.split("</think>", 1)
    split = _score(tasks[0], _trace(tasks[0], rest, think.replace("<think>", "", 1)))
    assert split.rewards["prosfi"].score == 1.0 and split.metrics["prosfi/format_ok"] == 1.0

    with server(settings()) as (url, app):
        remote = ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2"], count=2, task=ProsfiTaskConfig(serve_url=url)))
        task = next(iter(remote))
        assert _score(task, _trace(task, gold)).rewards["prosfi"].score == 1.0
        assert _score(task, _trace(task, rest, think[7:])).rewards["prosfi"].score == 1.0
        assert app.state.engine.scored == 2


def test_a_masked_completion_is_a_rollout_error_not_a_reward(monkeypatch):
    from verifiers.v1.errors import TaskError

    task = next(iter(ProsfiTaskset(ProsfiTasksetConfig(
        data=["kk:2"], count=1, task=ProsfiTaskConfig(serve_url="http://127.0.0.1:9")))))
    from prosfi.integrations import verifiers as integ

    integ.ProsfiTask._clients.clear()
    client = integ.ProsfiClient("http://127.0.0.1:9", retries=0)
    integ.ProsfiTask._clients[("http://127.0.0.1:9", None)] = client
    trace = _trace(task, gold_completion(Problem.from_dict(task.data.problem)))
    with pytest.raises(TaskError):
        asyncio.run(task.score(trace, None))
    integ.ProsfiTask._clients.clear()


def test_every_task_is_asked_in_its_own_domain_prompt():
    """A quantity task is shown the quantity prompt (givens, units), a logic task the logic one: the prompt
    the policy sees is the one its reward checks."""
    from prosfi.domains import domain_for

    tasks = list(ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2", "physics:easy"], count=1)))
    kinds = {}
    for task in tasks:
        problem = Problem.from_dict(task.data.problem)
        assert task.data.system_prompt == domain_for(problem).system_prompt
        assert task.data.prompt == domain_for(problem).user_prompt(problem)
        kinds[problem.kind] = task.data.system_prompt
    assert set(kinds) == {"assignment", "quantity"} and kinds["assignment"] != kinds["quantity"]
    assert "Givens:" in tasks[-1].data.prompt
