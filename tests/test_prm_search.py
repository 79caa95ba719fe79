"""Verifier-first beam search: pruned candidates never reach the PRM, calls are counted exactly, and
the output feeds the eval code (issue #15)."""

from __future__ import annotations

import math

import pytest

from prosfi.domains import get_domain
from prosfi.domains.logic.gold_path import Groundedness
from prosfi.domains.logic.perturbations import csp_candidates, next_grounded_step
from prosfi.prm.search import (
    HFProposer,
    Proposal,
    SearchConfig,
    cost_report,
    object_end,
    read_step,
    search,
    write_completion,
)
from prosfi.prm.steps import chain_verdicts
from prosfi.verify import Verifier, VerifierConfig

LOGIC = get_domain("logic")  # the step schema of these problems


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as v:
        yield v


@pytest.fixture(scope="module")
def problem():
    from prosfi.train.problems import generate_problems

    # a True problem whose derivation has several steps and distractors that give CSP twins
    for p in generate_problems("proverqa_gen", 30, seed=3, difficulty="medium"):
        gold = Groundedness(p).gold
        if p.answer_label == "True" and gold and len(gold) >= 3 and any(
                csp_candidates(p, gold[:i], gold[i]) for i in range(len(gold))):
            return p
    raise AssertionError("no suitable generated problem")


class ScriptedProposer:
    """Per prefix: the next gold step, its CSP twins, a negated (invalid) step, a malformed text, and `]`
    once the gold chain is complete."""

    def __init__(self, problem):
        self.gold = Groundedness(problem).gold
        self.parsed = self.proposed = 0

    def propose(self, problem, prefix, k):
        out = []
        nxt = next_grounded_step(problem, prefix, self.gold)
        if nxt is None:
            self.proposed += k
            return [Proposal("]", end=True)] * k
        out.append(Proposal("", step=nxt))
        out += [Proposal("", step=s) for _, s in csp_candidates(problem, prefix, nxt)[:1]]
        out.append(Proposal("", step={**nxt, "conclusion": f"¬ ({nxt['conclusion']})"}))
        out.append(Proposal("{not json"))
        out = out[:k]
        self.parsed += sum(p.step is not None for p in out)
        self.proposed += len(out)
        return out

    def answer(self, problem, steps):
        return problem.answer


class StubPRM:
    """0.9 for steps on the gold path, 0.3 otherwise; remembers everything it was asked."""

    def __init__(self, problem):
        self.ground = Groundedness(problem)
        self.items = []

    def score_steps(self, items):
        self.items += list(items)
        return [0.9 if self.ground.on_gold_path(step["conclusion"]) else 0.3 for _, _, step in items]


def _all_valid(problem, items, verifier) -> bool:
    verdicts = chain_verdicts([problem] * len(items), [list(prefix) + [step] for _, prefix, step in items], verifier)
    return all(v[-1] == "valid" for v in verdicts)


def test_verifier_first_search_prunes_before_the_prm_and_counts_exactly(problem, verifier):
    from prosfi.eval.generate import Generation
    from prosfi.eval.metrics import metrics
    from prosfi.eval.scoring import score_generations

    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    cfg = SearchConfig(beams=2, candidates=4, max_steps=10, mode="both")
    res = search(problem, proposer, prm, verifier, cfg)
    assert prm.items and _all_valid(problem, prm.items, verifier)  # no pruned candidate reached the PRM
    assert res.prm_calls == len(prm.items) == res.valid
    assert res.verifier_calls == res.unpruned_prm_calls == proposer.parsed
    assert res.prm_calls < res.unpruned_prm_calls  # the negated steps were pruned
    assert res.candidates == proposer.proposed
    assert [s["conclusion"] for s in res.steps] == [s["conclusion"] for s in Groundedness(problem).gold]
    (rec,) = score_generations([problem], [Generation(problem.id, 0, res.completion)], verifier)
    assert rec["answer_correct"] and rec["chain_valid"]
    m = metrics([rec], n_boot=10)
    assert m["accuracy"] == 1.0 and m["reward_hit"] == 1.0


def test_prm_only_ablation_sends_every_parsed_candidate_and_verifier_only_sends_none(problem, verifier):
    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    res = search(problem, proposer, prm, verifier, SearchConfig(beams=2, candidates=4, max_steps=10, mode="prm"))
    assert res.verifier_calls == 0 and res.prm_calls == res.unpruned_prm_calls == proposer.parsed == len(prm.items)
    assert not _all_valid(problem, prm.items, verifier)  # invalid steps were scored
    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    res = search(problem, proposer, prm, verifier, SearchConfig(beams=2, candidates=4, max_steps=10, mode="verifier"))
    assert prm.items == [] and res.prm_calls == 0 and res.verifier_calls == proposer.parsed
    assert res.steps  # a chain of valid steps, picked at random among the valid ones


def test_cost_model_matches_the_measured_counts(problem, verifier):
    cfg = SearchConfig(beams=2, candidates=4, max_steps=10, mode="both")
    res = search(problem, ScriptedProposer(problem), StubPRM(problem), verifier, cfg)
    c = cost_report([res], cfg)
    c_v, c_prm = res.verify_s / res.verifier_calls, res.prm_s / res.prm_calls
    assert c["C_V_ms"] == pytest.approx(1000 * c_v, abs=1e-3)
    cost = res.verifier_calls * c_v + res.prm_calls * c_prm
    assert c["cost_s"] == pytest.approx(cost, abs=1e-5)
    per_beam = res.unpruned_prm_calls / cfg.beams * c_prm
    assert c["iso_beams_unpruned"] == pytest.approx(cost / per_beam, rel=1e-2)
    assert c["prm_calls_saved"] == res.unpruned_prm_calls - res.prm_calls > 0
    # an unpruned (prm-mode) run affords exactly its own beam width; verifier-only borrows C_PRM
    res_prm = search(problem, ScriptedProposer(problem), StubPRM(problem), verifier,
                     SearchConfig(beams=2, candidates=4, max_steps=10, mode="prm"))
    assert cost_report([res_prm], SearchConfig(beams=2, mode="prm"))["iso_beams_unpruned"] == pytest.approx(2.0)
    res_v = search(problem, ScriptedProposer(problem), StubPRM(problem), verifier,
                   SearchConfig(beams=2, candidates=4, max_steps=10, mode="verifier"))
    cv = cost_report([res_v], SearchConfig(beams=2, mode="verifier"), c_prm=c_prm)
    assert cv["C_PRM_measured_here"] is False and cv["cost_s"] == pytest.approx(res_v.verify_s, abs=1e-5)


def test_read_step_of_hostile_text_is_a_reason_not_an_exception():
    deep = read_step('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", LOGIC)
    assert deep.reason and "not JSON" in deep.reason
    huge = read_step('{"id": "s1", "value": ' + "9" * 5000 + "}", LOGIC)
    assert huge.reason and "not JSON" in huge.reason


def test_read_step_stops_at_one_object():
    p = read_step(' {"id": "s1", "dependencies": ["h1"], "conclusion": "A } b", "rule": "x"},\n{"id": "s2"', LOGIC)
    assert p.step == {"id": "s1", "dependencies": ["h1"], "conclusion": "A } b", "rule": "x"}
    assert read_step("\n]\n</steps>", LOGIC).end and read_step("[]", LOGIC).end
    assert read_step('[{"id": "s1", "dependencies": [], "conclusion": "A", "rule": ""}', LOGIC).step["id"] == "s1"
    assert read_step(',\n{"id": "s2", "dependencies": [], "conclusion": "A", "rule": ""}', LOGIC).step["id"] == "s2"
    assert read_step('{"id": "s1", "dependen', LOGIC).step is None and not read_step("garbage", LOGIC).end
    assert object_end('{"a": "{"}, {') == len('{"a": "{"}')
    text = write_completion([p.step], "A")
    assert text.startswith("<think>") and text.endswith("<answer>A</answer>") and "<steps>\n[{" in text


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from prosfi.cli import main as prosfi_main

    out = tmp_path_factory.mktemp("search") / "tiny"
    assert prosfi_main(["model", "tiny", "--out", str(out), "--vocab-size", "512", "--hidden-size", "32",
                        "--intermediate-size", "64", "--num-hidden-layers", "1", "--corpus-problems", "20"]) == 0
    return out


def test_search_with_the_tiny_model_and_a_stub_prm(problem, verifier, tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tiny
    model, tok = AutoModelForCausalLM.from_pretrained(str(out)), AutoTokenizer.from_pretrained(str(out))
    proposer = HFProposer(model, tok, max_step_tokens=12, max_answer_tokens=4, max_think_tokens=8)
    prm = StubPRM(problem)
    cfg = SearchConfig(beams=2, candidates=3, max_steps=2)
    res = search(problem, proposer, prm, verifier, cfg)
    assert res.candidates == res.expansions * cfg.candidates + res.retries  # retries: regenerated failures
    assert res.retries <= cfg.retries * res.expansions * cfg.candidates
    assert res.verifier_calls == res.unpruned_prm_calls <= res.candidates - res.malformed
    assert res.prm_calls == len(prm.items) == res.valid
    assert _all_valid(problem, prm.items, verifier) if prm.items else True
    assert proposer.calls == res.candidates + 2  # k per expansion, plus the think block and the answer
    assert "<answer>" in res.completion and math.isfinite(res.total_s)


def test_search_command_writes_per_problem_records_and_the_cost_summary(problem, tiny, tmp_path):
    import json

    from prosfi.cli import main as prosfi_main
    from prosfi.data.problem import write_problems

    write_problems([problem], tmp_path / "p.jsonl")
    out = tmp_path / "search"
    rc = prosfi_main(["search", "--data", str(tmp_path / "p.jsonl"), "--model", str(tiny), "--mode", "verifier",
                      "--beams", "1", "--candidates", "2", "--max-steps", "1", "--max-step-tokens", "8",
                      "--max-think-tokens", "8", "--backends", "z3", "--workers", "0", "--bootstrap", "10",
                      "-o", str(out)])
    assert rc == 0
    (line,) = (out / "search.jsonl").read_text().splitlines()
    rec = json.loads(line)
    assert rec["mode"] == "verifier" and rec["problem_id"] == problem.id
    assert rec["candidates"] == 2 + rec["retries"] and rec["retries"] <= 2 * 2  # --retries 2 per failed candidate
    assert rec["prm_calls"] == 0 and "answer_correct" in rec["eval"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verifier"]["metrics"]["n_problems"] == 1 and summary["verifier"]["cost"]["candidates"] == 2
    assert prosfi_main(["search", "--data", str(tmp_path / "p.jsonl"), "--model", str(tiny)]) == 2  # no --prm


def test_a_round_of_beams_is_proposed_in_one_batched_generation(problem, tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prosfi.data.gold import gold_steps

    model, tok = AutoModelForCausalLM.from_pretrained(str(tiny)), AutoTokenizer.from_pretrained(str(tiny))
    proposer = HFProposer(model, tok, max_step_tokens=6, max_think_tokens=4)
    proposer.head(problem)
    before = proposer.calls
    groups = proposer.propose_many(problem, [[], gold_steps(problem)[:2]], 3)  # contexts of different lengths
    assert [len(g) for g in groups] == [3, 3] and proposer.calls == before + 6
    assert all(isinstance(p, Proposal) for g in groups for p in g)


class StallingProposer(ScriptedProposer):
    """The gold steps for the first `good` rounds, then only malformed text: the policy cannot go on."""

    def __init__(self, problem, good):
        super().__init__(problem)
        self.good = good

    def propose(self, problem, prefix, k):
        if len(prefix) >= self.good:
            return [Proposal("{not json")] * k
        return super().propose(problem, prefix, k)


def test_a_search_whose_beams_all_stall_answers_the_best_chain_reached(problem, verifier):
    """When no beam closes its array, the search answers the valid chain it built, not an empty one."""
    prm = StubPRM(problem)
    res = search(problem, StallingProposer(problem, good=2), prm, verifier,
                 SearchConfig(beams=2, candidates=4, max_steps=5, mode="both"))
    gold = [s["conclusion"] for s in Groundedness(problem).gold]
    assert [s["conclusion"] for s in res.steps] == gold[:2]
    assert all(v == "valid" for v in chain_verdicts([problem], [res.steps], verifier)[0])
    res = search(problem, StallingProposer(problem, good=0), prm, verifier,
                 SearchConfig(beams=2, candidates=4, max_steps=3, mode="both"))
    assert res.steps == []  # nothing valid was ever proposed: nothing to answer with
