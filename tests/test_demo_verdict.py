"""The demo's verdict (issue #22): `--data toy` draws held-out toy chains training never sees, and the run
summary ends with one verdict line against "soundness up, accuracy kept" (paired changes, 95 % intervals,
"kept" = the accuracy interval's lower bound not below -2 points); several runs (seeds) pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prosfi.data.toy import ToyConfig, generate, is_eval_problem


def _key(p):
    return frozenset(x.formal for x in p.premises), p.goal


def test_toy_eval_source_never_shares_a_problem_with_training_draws():
    from prosfi.eval.sources import load_sources

    (src,) = load_sources(["toy"], count=150)
    assert len(src.problems) == 150 and len({_key(p) for p in src.problems}) == 150  # distinct
    assert all(is_eval_problem(p) and p.extra["eval_group"] == ["toy", "1"] for p in src.problems)
    assert {p.answer for p in src.problems} == {"A", "B"}
    # training draws (any seed, the demo's layout or not) never land in the evaluation share
    for layout in ("fixed", "shuffled"):
        train = generate(ToyConfig(min_depth=1, max_depth=1, layout=layout), 1500, seed=0, split="train")
        assert not any(is_eval_problem(p) for p in train)
    fixed_train = {_key(p) for p in generate(ToyConfig(min_depth=1, max_depth=1, layout="fixed"), 3000, seed=1,
                                             split="train")}
    assert not fixed_train & {_key(p) for p in src.problems}
    # the share depends on the content only: the same problem with its premises reordered is in it too
    import dataclasses

    for p in src.problems[:20]:
        assert is_eval_problem(dataclasses.replace(p, premises=list(reversed(p.premises)), id="other"))


def test_toy_eval_spec_takes_depths_and_layout():
    from prosfi.eval.sources import SpecError, load_sources

    (src,) = load_sources(["toy:1..3,shuffled"], count=5)
    assert sorted({p.difficulty for p in src.problems}) == [1, 2, 3] and len(src.problems) == 15
    assert all(p.id.startswith("toy-eval-shuffled-") for p in src.problems)
    with pytest.raises(SpecError, match="1 to 3"):
        load_sources(["toy:4"], count=5)


def _eval_dir(path: Path, correct: list[bool], valid: list[bool], answers: list[str] | None = None) -> Path:
    """Records of one evaluation; `answers` the model's per problem (default: the right one where `correct`,
    the other otherwise; gold answers True, True, False, False, ...)."""
    path.mkdir(parents=True)
    golds = [_gold(i) for i in range(len(correct))]
    if answers is None:
        answers = [g if c else ("False" if g == "True" else "True") for g, c in zip(golds, correct)]
    lines = [{"problem_id": f"p{i}", "source": "toy", "difficulty": "1", "answer_correct": c, "chain_valid": v,
              "format_ok": True, "answer": a, "gold_answer": g}
             for i, (c, v, a, g) in enumerate(zip(correct, valid, answers, golds))]
    (path / "completions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _run(tmp_path: Path, name: str, before: tuple, after: tuple) -> Path:
    run = tmp_path / name
    _eval_dir(run / "eval_before", *before)
    _eval_dir(run / "eval_after", *after)
    return run


def _gold(i: int) -> str:
    return "True" if i % 4 < 2 else "False"


def _always_true(n: int, hit: bool) -> tuple:
    """A constant answerer's evaluation: True to every problem (right on the True problems), each right
    answer's chain verified when `hit`."""
    right = [_gold(i) == "True" for i in range(n)]
    return right, [r and hit for r in right], ["True"] * n


def test_verdict_holds_when_hit_rises_and_accuracy_stays(tmp_path):
    from prosfi.train.verdict import judge, paired_values

    n = 200
    acc = [i % 10 < 6 for i in range(n)]  # 60 % right before and after
    run = _run(tmp_path, "kept", (acc, [False] * n), (acc, acc))  # every right answer now verified
    v = judge(paired_values(run), n_boot=2000)
    assert v["reward_hit"]["diff"] == pytest.approx(0.6) and v["accuracy"]["diff"] == 0.0
    assert v["soundness_up"] and v["accuracy_kept"] and v["holds"]
    assert v["line"].startswith('verdict: the claim "soundness up, accuracy kept" holds on 200 held-out problems')
    assert "reward hit +60.0 points" in v["line"] and "accuracy kept (lower bound +0.0 >= -2 points)" in v["line"]


def test_verdict_says_accuracy_not_kept_when_its_interval_reaches_below_minus_two(tmp_path):
    from prosfi.train.verdict import judge, paired_values

    n = 200
    before = [i % 10 < 6 for i in range(n)]
    after = [i % 10 < 5 for i in range(n)]  # -10 points
    v = judge(paired_values(_run(tmp_path, "drop", (before, [False] * n), (after, after))), n_boot=2000)
    assert v["soundness_up"] and not v["accuracy_kept"] and not v["holds"]
    assert v["accuracy"]["diff_ci"][0] < -0.02
    assert "does not hold" in v["line"] and "accuracy NOT kept" in v["line"]


def test_pooled_table_over_seeds_and_the_command(tmp_path, capsys):
    from prosfi.train.verdict import main, pooled

    n = 200
    acc = [i % 10 < 6 for i in range(n)]
    runs = [_run(tmp_path, f"s{s}", (acc, [False] * n), (acc, [a and i % 2 == 0 for i, a in enumerate(acc)]))
            for s in (11, 12, 13)]
    result = pooled(runs, n_boot=1000)
    assert result["pooled"]["reward_hit"]["n"] == 600  # problem-runs, paired
    assert main([str(r) for r in runs]) == 0
    out = capsys.readouterr().out
    assert [ln.split()[0] for ln in out.splitlines()[1:5]] == ["s11", "s12", "s13", "pooled"]
    assert "pooled verdict: the claim" in out and "on every run: yes" in out
    assert main([str(tmp_path / "nothing")]) == 2


def test_run_summary_ends_with_the_verdict_line(tmp_path):
    from prosfi.train.summary import summarize
    from prosfi.train.verdict import run_verdict

    n = 100
    acc = [i % 2 == 0 for i in range(n)]
    run = _run(tmp_path, "r", (acc, [False] * n), (acc, acc))
    s = summarize([{"step": 1, "reward": 0.5}], "r")
    s.verdict = run_verdict(run, n_boot=500)
    assert s.to_text().splitlines()[-1].startswith("verdict: the claim")
    assert s.as_dict()["verdict"]["holds"] is True
    assert run_verdict(tmp_path / "no_eval") is None


def test_a_constant_answerer_after_grpo_fails_the_verdict_whatever_its_intervals(tmp_path):
    # issue #36: the demo's policy answered True to every held-out problem before and after GRPO; GRPO only
    # added the citation on the True problems: reward hit up, accuracy "kept" at the share of True problems
    from prosfi.train.verdict import run_verdict

    n = 200
    v = run_verdict(_run(tmp_path, "const", _always_true(n, False), _always_true(n, True)), n_boot=1000)
    assert v["soundness_up"] and v["accuracy_kept"]  # what the claim's intervals alone would say
    assert v["constant_before"] == v["constant_after"] == 1 and not v["reads_problems"] and not v["holds"]
    line = v["line"]
    assert line.startswith('verdict: the claim "soundness up, accuracy kept" does not hold')
    assert "NOT read: constant answering: the policy after GRPO gives the answer 'True' to 200 of 200" in line
    assert "majority-answer baseline 0.500 (always 'True')" in line and "before GRPO gives the answer" in line
    assert v["answers"][0]["after"]["top_share"] == 1.0


def test_a_constant_warm_up_is_said_but_a_policy_that_reads_after_grpo_can_hold(tmp_path):
    from prosfi.train.verdict import run_verdict

    n = 200
    right = [True] * n
    v = run_verdict(_run(tmp_path, "learnt", _always_true(n, False), (right, right)), n_boot=1000)
    assert v["constant_before"] == 1 and v["constant_after"] == 0 and v["holds"]
    assert "holds" in v["line"] and "constant answering: the policy before GRPO" in v["line"]
    assert "NOT read" not in v["line"]


def test_pooled_verdict_counts_the_runs_that_answer_constantly(tmp_path, capsys):
    from prosfi.train.verdict import main, pooled

    n = 100
    right = [i % 10 < 6 for i in range(n)]
    runs = [_run(tmp_path, "s1", (right, [False] * n), (right, right)),
            _run(tmp_path, "s2", _always_true(n, False), _always_true(n, True))]
    result = pooled(runs, n_boot=500)
    assert result["pooled"]["constant_after"] == 1 and not result["pooled"]["holds"]
    assert "on 1 of 2 runs" in result["pooled"]["line"]
    assert main([str(r) for r in runs]) == 1
    out = capsys.readouterr().out
    assert "CONSTANT answers after GRPO" in out.splitlines()[2] and "CONSTANT" not in out.splitlines()[1]


def test_run_summary_shows_the_answer_share_and_the_majority_baseline(tmp_path):
    from prosfi.eval.answers import answer_spread
    from prosfi.eval.evaluate import read_records
    from prosfi.train.summary import summarize
    from prosfi.train.verdict import run_verdict

    n = 200
    run = _run(tmp_path, "const", _always_true(n, False), _always_true(n, True))
    s = summarize([{"step": 1, "reward": 0.5}], "r")
    evals = {stage: {"overall": {"accuracy": 0.5, "reward_hit": 0.0, "format_rate": 1.0}, "n_problems": n,
                     "answers": answer_spread(read_records(run / f"eval_{stage}"))} for stage in ("before", "after")}
    s.add_held_out(evals["before"], evals["after"])
    s.verdict = run_verdict(run, n_boot=500)
    text = s.to_text()
    rows = {line[:18].strip(): line[18:].split() for line in text.splitlines()}
    assert rows["top answer share"] == ["1.000", "(True)", "CONSTANT"] * 2
    assert rows["majority baseline"] == ["0.500", "(True)"] * 2
    assert "constant answering: the policy before GRPO gives the answer 'True' to 200 of 200 problems" in text
    assert "its accuracy 0.500 next to the majority-answer baseline 0.500" in text
    assert text.splitlines()[-1].startswith("verdict: the claim \"soundness up, accuracy kept\" does not hold")
    assert s.as_dict()["answers"]["after"]["constant"] is True
