"""`EvalCallback` (eval curves during training) when one process's evaluation raises (issue #28): every
process raises `EvalFailed`, none is left waiting in the records' gather until the NCCL timeout.
Two threads stand in for two processes: the accelerator's all-reduce and the gather meet at barriers
that give up after a few seconds, where a real gather would wait for the NCCL timeout."""

from __future__ import annotations

import importlib
import threading
from types import SimpleNamespace

import pytest

pytest.importorskip("transformers")

from prosfi.train import eval_callback as ec

WAIT_S = 5.0


class _Acc:
    """The accelerator of one of `world` thread-processes: `reduce` sums their tensors at a barrier."""

    def __init__(self, rank: int, world: int, meet: dict):
        self.process_index, self.num_processes, self.device = rank, world, "cpu"
        self.meet = meet

    def unwrap_model(self, model):
        return model

    def reduce(self, tensor, reduction="sum"):
        board, barrier = self.meet["reduce"], self.meet["barrier"]
        board[self.process_index] = tensor.clone()
        barrier.wait(WAIT_S)
        total = sum(board.values())
        barrier.wait(WAIT_S)
        return total


def _run(monkeypatch, world: int, bad_rank: int | None):
    """Each thread-process evaluates 4 problems' share; `bad_rank`'s scoring raises. Returns per rank the
    summary or the exception, and which ranks reached the gather."""
    problems = [SimpleNamespace(id=f"p{i}") for i in range(4)]
    meet = {"reduce": {}, "gather": {}, "barrier": threading.Barrier(world)}
    gathered: list[int] = []

    def generate(padded, model, tok, cfg, settings, progress=False):
        return ["text"] * len(padded)

    def score(share, gens, verifier, reward_config, chain_config):
        rank = int(threading.current_thread().name)
        if rank == bad_rank:
            raise ValueError("verifier pool died")
        return [{"problem_id": p.id, "completion": "x"} for p in share]

    def gather(records):
        rank = int(threading.current_thread().name)
        gathered.append(rank)
        meet["gather"][rank] = records
        meet["barrier"].wait(WAIT_S)  # a real gather blocks until every process arrives
        return [r for k in sorted(meet["gather"]) for r in meet["gather"][k]]

    module = importlib.import_module  # `prosfi.eval.metrics` as a dotted name is a function of prosfi.eval
    monkeypatch.setattr(module("prosfi.eval.generate"), "generate_hf", generate)
    monkeypatch.setattr(module("prosfi.eval.scoring"), "score_generations", score)
    monkeypatch.setattr(module("prosfi.eval.metrics"), "summarize", lambda records, n_boot: {"overall": {"n": len(records)}})
    monkeypatch.setattr(ec, "gather_records", gather)
    results: dict[int, object] = {}

    def process(rank: int) -> None:
        cb = ec.EvalCallback(problems, every=1, verifier=None)
        cb.trainer = SimpleNamespace(accelerator=_Acc(rank, world, meet), model=None, processing_class=None)
        try:
            results[rank] = cb.evaluate_now()
        except Exception as exc:  # noqa: BLE001 - what each process raised is the result
            results[rank] = exc

    threads = [threading.Thread(target=process, args=(r,), name=str(r)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(4 * WAIT_S)
    return results, gathered


def test_a_failure_on_one_rank_raises_on_every_rank_before_the_gather(monkeypatch):
    results, gathered = _run(monkeypatch, world=2, bad_rank=1)
    assert gathered == []  # nobody waits in the gather
    assert all(isinstance(results[r], ec.EvalFailed) for r in (0, 1)), results
    assert "rank(s) 1 of 2" in str(results[0]) and "here" not in str(results[0])
    assert "here (rank 1): ValueError('verifier pool died')" in str(results[1])
    assert isinstance(results[1].__cause__, ValueError)


def test_without_a_failure_every_rank_gets_the_gathered_summary(monkeypatch):
    results, gathered = _run(monkeypatch, world=2, bad_rank=None)
    assert sorted(gathered) == [0, 1]
    assert results == {0: {"overall": {"n": 4}}, 1: {"overall": {"n": 4}}}


def test_one_process_raises_too(monkeypatch):
    results, gathered = _run(monkeypatch, world=1, bad_rank=0)
    assert isinstance(results[0], ec.EvalFailed) and "rank(s) 0 of 1" in str(results[0]) and gathered == []
