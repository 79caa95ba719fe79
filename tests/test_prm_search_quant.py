"""Verifier-first search over quantity steps with a scripted proposer: exact call counts (no pruned
candidate reaches the PRM, parse-validate-retry bounded, the verifier's reason in the retry), the step
schema of the quantity domain, and the FLOPs side of the cost model."""

from __future__ import annotations

import json

import pytest

from prosfi.domains import domain_for, get_domain
from prosfi.eval.sources import load_source
from prosfi.prm.search import Proposal, SearchConfig, cost_report, read_step, search
from prosfi.prm.steps import chain_verdicts

K = 4
LOGIC = get_domain("logic")


@pytest.fixture(scope="module")
def problem():
    for p in load_source("physics:medium,hard", count=10).problems:
        gold = domain_for(p).gold_steps(p)
        if gold and len(gold) >= 2 and domain_for(p).perturbations(p, [], gold[0]):
            return p
    raise AssertionError("no physics problem with a 2-step gold chain and a CSP twin")


def _key(step):
    return json.dumps({k: step.get(k) for k in ("expr", "op", "args")}, sort_keys=True)


class ScriptedProposer:
    """Per prefix (always a gold prefix here): the gold step, a CSP twin (valid, off the gold path), the gold
    step with a wrong value (invalid), a text that breaks the schema; `]` once the chain is complete.
    `retry` answers a schema failure with the gold step and a wrong value with the same wrong value."""

    def __init__(self, problem):
        self.d = domain_for(problem)
        self.gold = self.d.gold_steps(problem)
        self.prefixes, self.retry_reasons = [], []

    def _gold(self, prefix):
        return self.gold[len(prefix)]

    def _wrong(self, prefix):
        g = self._gold(prefix)
        return {**g, "value": g["value"] * 3 + 1}

    def propose(self, problem, prefix, k):
        assert [_key(s) for s in prefix] == [_key(s) for s in self.gold[:len(prefix)]]
        self.prefixes.append(len(prefix))
        if len(prefix) == len(self.gold):
            return [Proposal("]", end=True)] * k
        twin = self.d.perturbations(problem, prefix, self._gold(prefix))[0][1]
        bad_schema = read_step('{"id": "s9", "expr": 5}', self.d)
        assert bad_schema.step is None and bad_schema.reason
        return [Proposal("", step=self._gold(prefix)), Proposal("", step=twin),
                Proposal(json.dumps(self._wrong(prefix)), step=self._wrong(prefix)), bad_schema][:k]

    def retry(self, problem, prefix, failed, reason):
        self.retry_reasons.append(reason)
        if failed.step is None:
            return Proposal("", step=self._gold(prefix))
        return Proposal(failed.text, step=self._wrong(prefix))

    def answer(self, problem, steps):
        return domain_for(problem).answer_text(problem)


class StubPRM:
    """0.9 for the gold step of the position, 0.3 otherwise; remembers what it scored."""

    def __init__(self, problem):
        self.gold = domain_for(problem).gold_steps(problem)
        self.items = []

    def score_steps(self, items):
        self.items += list(items)
        return [0.9 if _key(step) == _key(self.gold[len(prefix)]) else 0.3 for _, prefix, step in items]


def test_quantity_search_prunes_before_the_prm_and_counts_retries_exactly(problem):
    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    cfg = SearchConfig(beams=2, candidates=K, max_steps=6, retries=2)
    res = search(problem, proposer, prm, None, cfg)
    n = len(proposer.gold)
    stepping = sum(1 for i in proposer.prefixes if i < n)  # expansions that proposed steps
    assert stepping >= n and res.expansions == len(proposer.prefixes)
    # per stepping expansion: schema failure -> 1 retry (recovered); wrong value -> 2 retries (bound), both invalid
    assert res.retries == 3 * stepping
    assert res.malformed == stepping
    assert res.verifier_calls == res.unpruned_prm_calls == 6 * stepping
    assert res.valid == res.prm_calls == len(prm.items) == 3 * stepping
    verdicts = chain_verdicts([problem] * len(prm.items), [list(p) + [s] for _, p, s in prm.items], None)
    assert all(v[-1] == "valid" for v in verdicts)  # no pruned candidate reached the PRM
    assert res.candidates == K * res.expansions + res.retries
    assert sum("wrong value" in r for r in proposer.retry_reasons) == 2 * stepping  # the verifier's reason
    assert sum(r.startswith("schema") for r in proposer.retry_reasons) == stepping
    assert [_key(s) for s in res.steps] == [_key(s) for s in proposer.gold]
    d = domain_for(problem)
    trace = d.parse_trace(problem, res.completion)
    assert trace.trace is not None and d.check_chain(problem, trace.trace.steps).steps[-1].verdict == "valid"


def test_without_retries_failures_are_dropped(problem):
    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    res = search(problem, proposer, prm, None, SearchConfig(beams=1, candidates=K, max_steps=6, retries=0))
    stepping = sum(1 for i in proposer.prefixes if i < len(proposer.gold))
    assert res.retries == 0 and not proposer.retry_reasons
    assert res.verifier_calls == 3 * stepping and res.prm_calls == 2 * stepping


def test_prm_only_mode_scores_every_parsed_candidate_and_retries_only_schema_failures(problem):
    proposer, prm = ScriptedProposer(problem), StubPRM(problem)
    res = search(problem, proposer, prm, None, SearchConfig(beams=1, candidates=K, max_steps=6, mode="prm"))
    stepping = sum(1 for i in proposer.prefixes if i < len(proposer.gold))
    assert res.verifier_calls == 0 and res.retries == stepping
    assert res.prm_calls == res.unpruned_prm_calls == 4 * stepping


def test_read_step_takes_the_quantity_schema(problem):
    d = domain_for(problem)
    ok = read_step(' {"id": "s1", "expr": "g1 * g2", "value": 6, "unit": "m"},\n{"id"', d)
    assert ok.step is not None and ok.step["expr"] == "g1 * g2" and ok.step["value"] == 6
    assert read_step('{"id": "s1", "expr": "g1 * g2", "value": 6, "unit": "m"}', LOGIC).step is None  # logic schema
    assert read_step("]", d).end
    assert read_step("{not json", d).reason


def test_cost_model_flops_per_query_and_iso_beams(problem):
    class Tok:
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": text.split()}

    class TokPRM(StubPRM):
        tokenizer = Tok()

    proposer, prm = ScriptedProposer(problem), TokPRM(problem)
    cfg = SearchConfig(beams=2, candidates=K, max_steps=6)
    res = search(problem, proposer, prm, None, cfg)
    from prosfi.prm.inputs import pairwise_text

    tokens = sum(len("".join(pairwise_text(*it)).split()) for it in prm.items)
    assert res.prm_tokens == tokens
    c = cost_report([res], cfg, prm_params=1_000_000)
    assert c["prm_gflops_per_query"] == pytest.approx(2e6 * tokens / 1e9, rel=1e-4)
    assert c["iso_beams_unpruned_flops"] == pytest.approx(2 * res.prm_calls / res.unpruned_prm_calls, abs=1e-3)
    assert c["retries"] == res.retries
