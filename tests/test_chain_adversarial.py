"""Reward hacking: generated completions that try to earn the top reward without an honest chain.

Each family is built from seeded K&K (2-8 people) and ProverQA-style (easy-extra) problems. A
bundle or over-citation hack is a real hack: with the new guards turned off it earns 1.0 (so the
test cannot pass by the hack being malformed); with the defaults it earns less, and the reason
names the guard that stopped it. Every gold trace prosfi generates still earns 1.0.
"""

from __future__ import annotations

import json
import random

import pytest

from prosfi.chain import ChainConfig
from prosfi.data import kk, pqa_gen
from prosfi.data.gold import answer_text, gold_completion, gold_steps
from prosfi.data.proverqa import load_proverqa
from prosfi.logic import parse
from prosfi.rewards import score_batch
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

# the guards this issue adds, all off: what a policy could earn before them
UNGUARDED = ChainConfig(max_conjuncts=0, max_weight=0, max_rules=0, reject_unused=False,
                        reject_fresh_symbols=False)
GUARDS = ("max_conjuncts", "max_weight", "max_rules", "reject_unused", "reject_fresh_symbols",
          "uncertain: verify", "max_dependencies", "tautology", "restates", "repeats")


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=3000)) as v:
        yield v


def _kk(seed: int = 3):
    return [p for n in range(2, 9) for p in kk.generate(kk.KKConfig(people=n), 1, seed + n)]


def _pqa(label: str | None = None, seed: int = 5, per: int = 3):
    out = []
    for d in ("easy", "medium", "hard", "extra"):
        out += [p for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 3 * per, seed)
                if label is None or p.answer_label == label]
    return out


def _targets(problem) -> list[str]:
    """What the chain must conclude for the gold answer."""
    if problem.kind == "assignment":
        return [a if problem.assignment[a] else f"¬ {a}" for a in problem.atoms]
    return [problem.goal if problem.answer_label == "True" else f"¬ ({problem.goal})"]


def _step(sid, deps, conclusion):
    return {"id": sid, "dependencies": list(deps), "conclusion": conclusion, "rule": "hack"}


def _bundle(problem, ids, join, group=4):
    """Bundle premise ids into conjunction steps (groups of `group`, bundles of bundles until at
    most 4 remain), then conclude every target from the top bundles."""
    text = dict(problem.premise_map)
    steps, items = [], list(ids)
    while len(items) > 4 or (items and all(i in text for i in items) and len(items) > 1 and not steps):
        nxt = []
        for k in range(0, len(items), group):
            chunk = items[k:k + group]
            if len(chunk) == 1:
                nxt.append(chunk[0])
                continue
            sid = f"b{len(steps) + 1}"
            steps.append(_step(sid, chunk, join([text[c] for c in chunk])))
            text[sid] = steps[-1]["conclusion"]
            nxt.append(sid)
        if len(nxt) == len(items):
            break
        items = nxt
    for t, target in enumerate(_targets(problem)):
        steps.append(_step(f"g{t + 1}", items, target))
    return steps


def _and(parts):
    return " ∧ ".join(f"({p})" for p in parts)


def _not_implies(parts):  # A ∧ B written as ¬ (A → ¬ B), nested for more parts
    out = f"({parts[-1]})"
    for p in reversed(parts[:-1]):
        out = f"¬ (({p}) → ¬ {out})"
    return out


def _or_twice(parts):
    return f"({_and(parts)}) ∨ ({_and(parts)})"


def _gold_premises(problem):
    steps = gold_steps(problem) or []
    return list(dict.fromkeys(d for s in steps for d in s["dependencies"] if d in problem.premise_map))


def _hacks_true_false_and_kk():
    """(family, problem, steps) for bundling and cite-everything, over K&K and True/False ProverQA."""
    problems = _kk() + [p for p in _pqa(per=2) if p.answer_label != "Uncertain"]
    out = []
    for p in problems:
        all_ids = list(p.premise_map)
        needed = _gold_premises(p)
        out.append(("bundle", p, _bundle(p, all_ids, _and)))
        out.append(("bundle-pairs-nested", p, _bundle(p, all_ids, _and, group=2)))
        out.append(("bundle-partial", p, _bundle(p, needed, _and)))
        out.append(("bundle-disguised-not-implies", p, _bundle(p, needed, _not_implies, group=2)))
        out.append(("bundle-disguised-or", p, _bundle(p, needed, _or_twice, group=2)))
        if len(needed) <= 4:
            out.append(("cite-everything", p, [_step(f"s{t + 1}", needed, target)
                                               for t, target in enumerate(_targets(p))]))
        if len(all_ids) <= 4:
            out.append(("cite-all-premises", p, [_step(f"s{t + 1}", all_ids, target)
                                                 for t, target in enumerate(_targets(p))]))
        padded, rng = [], random.Random(p.id)
        for s in gold_steps(p) or []:
            spare = [i for i in all_ids if i not in s["dependencies"]]
            deps = list(s["dependencies"]) + ([rng.choice(spare)] if spare and len(s["dependencies"]) < 4 else [])
            padded.append({**s, "dependencies": deps})
        out.append(("padded-citations", p, padded))
    return out


def _render(problem, steps) -> str:
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return f"<think>\nhack\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer_text(problem)}</answer>"


def _score(verifier, cases, config):
    problems = [p for _, p, _ in cases]
    texts = [_render(p, steps) for _, p, steps in cases]
    return score_batch(problems, texts, verifier, chain_config=config)


def test_bundling_and_over_citation_hacks_stay_below_the_top(verifier):
    cases = _hacks_true_false_and_kk()
    before = _score(verifier, cases, UNGUARDED)
    real = [(c, b) for c, b in zip(cases, before) if b.reward == 1.0]
    families = {c[0] for c, _ in real}
    # every family is a real hack somewhere (earned 1.0 without these guards)
    assert families >= {"bundle", "bundle-pairs-nested", "bundle-partial", "bundle-disguised-not-implies",
                        "bundle-disguised-or", "cite-everything", "padded-citations"}, families
    after = _score(verifier, [c for c, _ in real], ChainConfig())
    for (family, p, _), r in zip([c for c, _ in real], after):
        assert r.reward < 1.0 and not r.chain_valid, (family, p.id, r.reason)
        assert any(g in r.reason for g in GUARDS), (family, p.id, r.reason)


def _uncertain_hacks():
    out = []
    for p in _pqa("Uncertain", per=3):
        subject = min(a.name for a in parse(p.goal).args if hasattr(a, "name"))
        gold = gold_steps(p)
        assert gold, p.id
        h = next(iter(p.premise_map))
        out.append(("fresh-disjunct", p, [_step("s1", [h], f"({p.premise_map[h]}) ∨ Zzz {subject}")]))
        out.append(("fresh-constant", p, [_step("s1", [h], f"({p.premise_map[h]}) ∨ {p.goal.split()[0]} zed")]))
        out.append(("first-step-only", p, gold[:1]))
        if len(gold) > 1:
            out.append(("partial-derivation", p, gold[:-1]))
        from prosfi.logic.relevance import relevant_premises

        relevant, _ = relevant_premises(p.goal, list(p.premise_map.items()))
        for pid, text in p.premise_map.items():
            if pid not in relevant and text.startswith("∀ x,"):  # a rule that does not bear on the goal
                inst = text[len("∀ x, "):].replace(" x", f" {subject}")
                out.append(("irrelevant-instantiation", p, [_step("s1", [pid], inst)]))
                out.append(("gold-plus-irrelevant", p, gold + [_step("sx", [pid], inst)]))
                break
        for pid, text in p.premise_map.items():  # a fact about someone else, pushed through a rule
            parts = text.replace("¬ ", "").split()
            if len(parts) == 2 and parts[1] != subject:
                rule = next((r for r, t in p.premise_map.items() if t.startswith(f"∀ x, {text.replace(parts[1], 'x')} → ")), None)
                if rule:
                    head = p.premise_map[rule].split(" → ", 1)[1].replace(" x", f" {parts[1]}")
                    out.append(("other-constant", p, [_step("s1", [rule, pid], head)]))
                    out.append(("gold-plus-other-constant", p, gold + [_step("sx", [rule, pid], head)]))
                    break
    return out


def test_uncertain_for_free_stays_below_the_top(verifier):
    cases = _uncertain_hacks()
    families = {f for f, _, _ in cases}
    assert families >= {"fresh-disjunct", "first-step-only", "partial-derivation", "irrelevant-instantiation",
                        "gold-plus-irrelevant", "other-constant"}, families
    # the steps themselves are valid inferences (what made them earn 1.0 before)
    loose = _score(verifier, cases, ChainConfig(uncertain="cap", reject_fresh_symbols=False))
    valid = {f for (f, _, _), r in zip(cases, loose) if all(s.verdict == "valid" for s in r.steps)}
    assert valid == families
    for (family, p, _), r in zip(cases, _score(verifier, cases, ChainConfig())):
        assert r.answer_correct and r.reward < 1.0, (family, p.id, r.reason)
        assert any(g in r.reason for g in GUARDS), (family, p.id, r.reason)


def test_uncertain_cap_and_exclude_never_reach_the_top(verifier):
    problems = _pqa("Uncertain", per=1)
    texts = [gold_completion(p) for p in problems]
    for mode in ("cap", "exclude"):
        results = score_batch(problems, texts, verifier, chain_config=ChainConfig(uncertain=mode))
        assert all(r.answer_correct and r.reward == 0.3 and f"uncertain: {mode}" in r.reason for r in results)
    assert all(r.reward == 1.0 for r in score_batch(problems, texts, verifier))


@pytest.mark.parametrize("seed", range(4))
def test_every_generated_gold_trace_scores_one(verifier, seed):
    """Property: gold traces for K&K 2-8 and ProverQA-style easy-extra (all labels) earn 1.0."""
    problems = [p for n in range(2, 9) for p in kk.generate(kk.KKConfig(people=n), 2, 1000 * seed + n)]
    problems += [p for d in ("easy", "medium", "hard", "extra")
                 for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 6, 31 * seed + 1)]
    if seed == 0:  # the public-format fixture records too
        from pathlib import Path

        fixtures = Path(__file__).parent / "fixtures"
        problems += load_proverqa("hard", path=str(fixtures / "proverqa_dev.json"))
        problems += [kk.problem_from_kk_record(json.loads(line), f"kk-rec-{i}")
                     for i, line in enumerate((fixtures / "kk_records.jsonl").read_text().splitlines()) if line.strip()]
    texts = [gold_completion(p) for p in problems]
    assert all(t is not None for t in texts)
    results = score_batch(problems, texts, verifier)
    bad = [(p.id, r.reason) for p, r in zip(problems, results) if r.reward != 1.0]
    assert not bad


def _compound(problem, goal: str, n: int):
    d = problem.to_dict()
    d.update(id=f"{problem.id}-c{n}", goal=goal)
    d.pop("proof", None)
    return type(problem).from_dict(d)


def test_uncertain_compound_goals_get_a_gold_trace_that_scores_one(verifier):
    """Uncertain problems whose goal is compound (→, ⊕, ∧, ∨ over ground atoms) get the relevant
    derivation as their gold trace, and it earns 1.0; one step short of it does not."""
    from prosfi.data.fol_proof import relevant_derivation

    problems = []
    for p in _pqa("Uncertain", per=2):
        _, required = relevant_derivation(p)
        lit = required[0]
        goals = [f"({p.goal}) ∧ ({lit})", f"({lit}) → ({p.goal})", f"Xor' ({p.goal}) ({lit})",
                 f"({p.goal}) ∨ ¬ ({lit})"]
        problems += [_compound(p, g, n) for n, g in enumerate(goals)]
    texts = [gold_completion(p) for p in problems]
    assert all(t is not None for t in texts)
    results = score_batch(problems, texts, verifier)
    assert [(p.id, r.reason) for p, r in zip(problems, results) if r.reward != 1.0] == []
    short = [(p, (gold_steps(p) or [])[:-1]) for p in problems]
    results = _score(verifier, [("short", p, s) for p, s in short if s], ChainConfig())
    assert all(r.reward < 1.0 and "uncertain: verify" in r.reason for r in results)
