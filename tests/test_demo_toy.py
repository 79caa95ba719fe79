"""The CPU demo's pieces: toy rule chains, held-out draws, the before/after summary, the twin recipes.

No model is trained here (the demo itself is the end-to-end check); gold traces are scored by the
real verifier, so a generator bug that yields an unprovable or non-atomic step fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from prosfi.data.gold import gold_completion
from prosfi.data.toy import ENTITIES, PREDICATES, ToyConfig, generate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def verifier():
    from prosfi.verify import Verifier, VerifierConfig

    with Verifier(VerifierConfig(backends=("z3",), workers=0)) as v:
        yield v


@pytest.mark.parametrize("fixed", [True, False])
def test_gold_traces_score_top_reward_and_are_atomic(verifier, fixed):
    from prosfi.rewards.score import score_batch

    problems = generate(ToyConfig(min_depth=1, max_depth=3, fixed_chain=fixed), 60, seed=3)
    for p in problems:
        p.validate()
    results = score_batch(problems, [gold_completion(p, verifier=verifier) for p in problems], verifier)
    assert [r.reward for r in results] == [1.0] * len(problems)
    for p in problems:
        proof = p.extra["proof"]
        assert len(proof) == p.extra["depth"]
        for step in proof:  # one rule and one fact (or earlier step), a literal conclusion
            assert len(step["dependencies"]) == 2 and " → " not in step["conclusion"]
        last = proof[-1]["conclusion"]
        assert last == (p.goal if p.answer_label == "True" else f"¬ {p.goal}")


def test_labels_alternate_and_generation_is_seeded():
    a = generate(ToyConfig(), 10, seed=7)
    assert [p.answer_label for p in a] == ["True", "False"] * 5
    assert [p.to_dict() for p in a] == [p.to_dict() for p in generate(ToyConfig(), 10, seed=7)]
    assert [p.to_dict() for p in a] != [p.to_dict() for p in generate(ToyConfig(), 10, seed=8)]


def test_fixed_chain_uses_the_vocabulary_in_order():
    for p in generate(ToyConfig(min_depth=1, max_depth=3), 40, seed=1):
        depth = p.extra["depth"]
        assert p.goal == f"{PREDICATES[depth]} {ENTITIES[0]}"
        assert f"{PREDICATES[0]} {ENTITIES[0]}" in p.premise_map.values()
        assert len(set(p.premise_map.values())) == len(p.premises)  # no premise twice


def test_distractors_never_decide_the_goal(verifier):
    """Without the chain's rules the premises entail neither the goal nor its negation."""
    from prosfi.verdict import Entailment, Status

    checks = []
    for p in generate(ToyConfig(max_depth=3, distractors=3), 40, seed=5):
        chain_rules = {d for s in p.extra["proof"] for d in s["dependencies"] if d.startswith("h")}
        rest = {k: v for k, v in p.premise_map.items() if k not in chain_rules or " → " not in v}
        checks += [Entailment(rest, p.goal), Entailment(rest, f"¬ {p.goal}")]
    assert all(v.status is Status.INVALID for v in verifier.check_many(checks))


def test_config_is_checked():
    with pytest.raises(ValueError):
        ToyConfig(min_depth=3, max_depth=2)
    with pytest.raises(ValueError):
        ToyConfig(labels=("Uncertain",))
    with pytest.raises(ValueError):
        ToyConfig(entities=1)


def test_fixed_layout_puts_fact_and_rules_first(verifier):
    from prosfi.rewards.score import score_batch

    problems = generate(ToyConfig(min_depth=1, max_depth=2, layout="fixed"), 40, seed=2)
    for p in problems:
        depth = p.extra["depth"]
        assert p.premises[0].id == "h1" and p.premises[0].formal == f"{PREDICATES[0]} {ENTITIES[0]}"
        for k in range(1, depth + 1):  # rule k is h(k+1) and leads from chain predicate k-1 to k
            rule = p.premise_map[f"h{k + 1}"]
            assert rule.startswith(f"∀ x, {PREDICATES[k - 1]} x → ") and rule.endswith(f"{PREDICATES[k]} x")
        assert p.extra["proof"][0]["dependencies"] == ["h2", "h1"]
    # the answer still has to be read from the rule's sign
    assert {p.answer_label for p in problems if "¬" in p.premise_map["h2"] and p.extra["depth"] == 1} == {"False"}
    assert [r.reward for r in score_batch(problems, [gold_completion(p) for p in problems], verifier)] == [1.0] * 40
    distractor_orders = {tuple(x.formal for x in p.premises[p.extra["depth"] + 1:]) for p in problems}
    assert len(distractor_orders) > 1
    with pytest.raises(ValueError):
        ToyConfig(layout="sorted")


@pytest.mark.parametrize("layout", ["fixed", "shuffled"])
def test_sloppy_traces_keep_the_answer_and_fail_the_verifier(verifier, layout):
    """The warm-up's careless variant: the gold answer (what an outcome reward sees), a rejected chain."""
    from prosfi.data.gold import sloppy_completion
    from prosfi.rewards.score import score_batch

    problems = generate(ToyConfig(min_depth=1, max_depth=2, layout=layout), 30, seed=4)
    sloppy = [sloppy_completion(p) for p in problems]
    gold = score_batch(problems, [gold_completion(p) for p in problems], verifier)
    results = score_batch(problems, sloppy, verifier)
    for p, r, g in zip(problems, results, gold):
        assert r.format_ok and r.answer_correct and r.answer == g.answer
        assert not r.chain_valid and r.reward < g.reward == 1.0
        assert r.reason.startswith("step s1 invalid"), r.reason  # a countermodel: the rule alone proves nothing


@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.6, 1.0])
def test_sloppy_fraction_is_honoured(fraction):
    from prosfi.data.gold import sloppy_completion
    from prosfi.train.rows import sft_dataset

    problems = generate(ToyConfig(min_depth=1, max_depth=1, layout="fixed"), 50, seed=6)
    rows = sft_dataset(problems, sloppy_fraction=fraction, seed=1)
    texts = [r["completion"][0]["content"] for r in rows]
    n_sloppy = sum(t == sloppy_completion(p) for t, p in zip(texts, problems))
    assert n_sloppy == round(50 * fraction)
    assert all(t == gold_completion(p) for t, p in zip(texts, problems) if t != sloppy_completion(p))
    if 0 < fraction < 1:  # which ones follows the seed
        other = [r["completion"][0]["content"] for r in sft_dataset(problems, sloppy_fraction=fraction, seed=2)]
        assert other != texts


def _rule_about_goal_after_h2(problem):
    """(id, negated) of the last `∀ x, … → [¬] goal x` premise, read from the text (the test's own reading)."""
    pred = problem.goal.split()[0]
    found = None
    for premise in problem.premises:
        head = premise.formal.rsplit("→", 1)[-1].strip() if premise.formal.startswith("∀") else ""
        if head in (f"{pred} x", f"¬ {pred} x"):
            found = (premise.id, head.startswith("¬"))
    return found


@pytest.mark.parametrize("sloppy", [False, True])
def test_careless_traces_read_the_last_rule_about_the_goal_and_answer_wrong(verifier, sloppy):
    """The warm-up's wrong-answer variant (issue #28's headroom, issue #36's balance): where an opposite-signed
    rule about the goal comes after the chain's own, the careless trace cites it and answers by it. Both
    rewards pay it least; True and False problems alike have one, so a warm-up on them is no constant answerer."""
    from prosfi.data.gold import careless_completion, sloppy_completion
    from prosfi.rewards.score import score_batch

    problems = generate(ToyConfig(min_depth=1, max_depth=2, layout="fixed"), 120, seed=4)
    with_variant = []
    for p in problems:
        last = _rule_about_goal_after_h2(p)
        gold_negated = p.answer_label == "False"
        expected = last is not None and last[1] != gold_negated
        assert (careless_completion(p) is not None) == expected, p.premises
        if expected:
            with_variant.append((p, last[0]))
    labels = [p.answer_label for p, _ in with_variant]
    assert labels.count("True") >= 10 and labels.count("False") >= 10  # both answers get misread
    misread = [p for p, _ in with_variant]
    careless = [careless_completion(p, sloppy=sloppy) for p in misread]
    for (p, rule), r, text in zip(with_variant, score_batch(misread, careless, verifier), careless):
        wrong = "False" if p.answer_label == "True" else "True"
        assert r.format_ok and not r.answer_correct and r.answer == wrong and not r.chain_valid
        assert r.reward == 0.1  # the wrong-answer level, as for any wrong answer
        base = sloppy_completion(p) if sloppy else gold_completion(p)
        last_gold = json.loads(base.split("<steps>")[1].split("</steps>")[0])[-1]
        last = json.loads(text.split("<steps>")[1].split("</steps>")[0])[-1]
        assert last["dependencies"][0] == rule and last["dependencies"][1:] == last_gold["dependencies"][1:]
        assert last["conclusion"] == (f"¬ {p.goal}" if wrong == "False" else p.goal)
        assert text.endswith(f"<answer>{'A' if wrong == 'True' else 'B'}</answer>")


@pytest.mark.parametrize("fraction", [0.0, 0.5, 1.0])
def test_careless_fraction_takes_the_misreadable_problems_and_keeps_the_sloppy_share(fraction):
    from prosfi.data.gold import careless_completion, sloppy_completion
    from prosfi.train.rows import sft_dataset

    problems = generate(ToyConfig(min_depth=1, max_depth=1, layout="fixed"), 300, seed=6)
    rows = sft_dataset(problems, sloppy_fraction=0.6, careless_fraction=fraction, seed=1)
    plain = [r["completion"][0]["content"] for r in sft_dataset(problems, sloppy_fraction=0.6, seed=1)]
    texts = [r["completion"][0]["content"] for r in rows]
    changed = [i for i, (a, b) in enumerate(zip(plain, texts)) if a != b]
    misreadable = [i for i, p in enumerate(problems) if careless_completion(p) is not None]
    assert set(changed) <= set(misreadable)
    for i in changed:  # on top of the sloppy choice: a sloppy trace stays sloppy, a gold one gold
        was_sloppy = plain[i] == sloppy_completion(problems[i])
        assert texts[i] == careless_completion(problems[i], sloppy=was_sloppy)
    assert {0.0: 0, 1.0: len(misreadable)}.get(fraction, len(changed)) == len(changed)
    if fraction == 0.5:
        assert 0.35 * len(misreadable) < len(changed) < 0.65 * len(misreadable)
    if fraction == 1.0:  # the warm-up's answers stay balanced: no answer on more than 60 % of the traces
        answers = [t.rsplit("<answer>", 1)[1][:1] for t in texts]
        assert max(answers.count("A"), answers.count("B")) < 0.6 * len(answers)


def _script(**kw):
    base = dict(dataset="toy", dataset_size=50, dataset_seed=0, dataset_difficulty="1-2", dataset_path=None,
                dataset_exclude_uncertain=False, sft=True, sft_size=300, sft_draws=1, eval_held_out=40,
                toy_layout="shuffled")
    return SimpleNamespace(**{**base, **kw})


@pytest.mark.parametrize("sft,layout", [(True, "shuffled"), (False, "shuffled"), (True, "fixed")])
def test_held_out_problems_are_never_training_problems(sft, layout):
    from prosfi.train.heldout import _content_key, held_out_problems
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    script = _script(sft=sft, toy_layout=layout, dataset_difficulty="1" if layout == "fixed" else "1-2")
    held = held_out_problems(script)
    assert len(held) == 40
    training = {_content_key(p) for p in from_script_args(script) + sft_problems(script)}
    assert not training & {_content_key(p) for p in held}
    assert len({_content_key(p) for p in held}) == 40  # no repeats either
    assert [p.id for p in held] == [p.id for p in held_out_problems(script)]  # the same set every run


def _overall(hit: float) -> dict:
    return {"overall": {"n": 40, "accuracy": 0.8, "accuracy_ci": [0.7, 0.9], "format_rate": 1.0,
                        "format_rate_ci": [1.0, 1.0], "reward_hit": hit, "reward_hit_ci": [hit - 0.1, hit + 0.1],
                        "step_validity": 0.5, "step_validity_ci": [0.4, 0.6], "unknown_rate": 0.0,
                        "unknown_rate_ci": [0.0, 0.0], "mean_steps": 1.5}, "n_problems": 40}


def test_summary_shows_held_out_before_and_after(tmp_path):
    from prosfi.train.summary import summarize

    rows = [{"step": i, "reward": 0.1 * i} for i in range(1, 11)]
    s = summarize(rows, "demo", window=2)
    s.add_held_out(_overall(0.25), _overall(0.45))
    text = s.to_text()
    assert "before GRPO" in text and "after GRPO" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("reward_hit"))
    assert "0.250 [0.15, 0.35]" in line and "0.450 [0.35, 0.55]" in line
    d = json.loads(json.dumps(s.as_dict()))
    assert d["eval_before"]["reward_hit"] == 0.25 and d["eval_after"]["reward_hit"] == 0.45
    assert d["eval_after"]["accuracy_ci"] == [0.7, 0.9]
    png = s.plot_reward(rows, tmp_path / "reward_curve.png")
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert s.as_dict()["where"]["reward curve"] == str(png)


def test_summary_without_held_out_has_no_eval_keys():
    from prosfi.train.summary import summarize

    s = summarize([{"step": 1, "reward": 0.5}], "r")
    assert "eval_before" not in s.as_dict() and "held-out" not in s.to_text()


@pytest.mark.parametrize(("name", "dataset", "corpus"), [("cpu_chains", "toy", "toy"),
                                                     ("cpu_quant", "physics", "physics:demo")])
def test_outcome_twin_differs_only_in_reward_mode(name, dataset, corpus):
    pro = yaml.safe_load((ROOT / "recipes" / "demo" / f"{name}.yaml").read_text())
    out = yaml.safe_load((ROOT / "recipes" / "demo" / f"{name}_outcome.yaml").read_text())
    assert pro.pop("reward_mode") == "prosfi" and out.pop("reward_mode") == "outcome"
    assert pro == out
    assert pro["dataset"] == dataset and pro["eval_held_out"] > 0 and pro["tiny"]["corpus"] == corpus


def test_prosfi_data_toy_writes_the_demo_chains(tmp_path, capsys):
    """`prosfi data toy` writes the demo's problems: seeded bytes, fixed layout, gold traces that verify."""
    from prosfi.cli import main
    from prosfi.data.gold import gold_completion
    from prosfi.data.problem import read_problems

    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        assert main(["data", "toy", "--count", "6", "--seed", "3", "-o", str(tmp_path / name)]) == 0
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1] and len(outs[0].splitlines()) == 6
    problems = list(read_problems(tmp_path / "a.jsonl"))
    assert {p.answer for p in problems} == {"A", "B"}
    assert all(p.premises[0].id == "h1" and " " in p.premises[0].formal and "∀" not in p.premises[0].formal
               for p in problems)  # fixed layout: the fact first
    assert all(gold_completion(p) for p in problems)
    assert main(["data", "toy", "--depth", "2-3", "--count", "4", "-o", str(tmp_path / "deep.jsonl")]) == 0
    assert {p.difficulty for p in read_problems(tmp_path / "deep.jsonl")} <= {2, 3, "2", "3"}
    assert main(["data", "toy", "--depth", "x", "-o", str(tmp_path / "bad.jsonl")]) == 2
    assert "--depth" in capsys.readouterr().err
