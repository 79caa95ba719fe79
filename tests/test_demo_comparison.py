"""The prosfi-vs-outcome table (issue #28): per reward, per seed and pooled, paired intervals, the head-to-head
row and a shape line computed from the intervals, on synthetic run summaries (no training)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prosfi.train.comparison import compare, load_run, main, plot, table

N = 100


def _summary(before: tuple, after: tuple) -> dict:
    """Problems p0.. right in index order before and after (the ones right before stay right).
    Dict order must not matter: pairing is by problem id."""
    return {"before": _by_index(*before), "after": _by_index(*after)}


def _by_index(acc: float, hit: float) -> dict:
    right, hits = round(acc * N), round(hit * N)
    return {f"p{i}": {"accuracy": float(i < right), "reward_hit": float(i < min(hits, right))} for i in range(N)}


WARM = (0.60, 0.0)


def _runs(outcome_after=(0.65, 0.0), prosfi_after=(0.62, 0.50), seeds=("s1", "s2", "s3")) -> dict:
    return {"outcome": {s: _summary(WARM, outcome_after) for s in seeds},
            "prosfi": {s: _summary(WARM, prosfi_after) for s in seeds}}


def test_expected_shape_is_shown_when_every_part_holds():
    result = compare(_runs(), n_boot=500)
    pro, outc = result["rewards"]["prosfi"]["pooled"], result["rewards"]["outcome"]["pooled"]
    assert pro["reward_hit"]["n"] == 3 * N and pro["reward_hit"]["diff"] == pytest.approx(0.5, abs=1e-3)
    assert pro["accuracy"]["diff"] == pytest.approx(0.02, abs=1e-3)
    assert outc["accuracy"]["diff"] == pytest.approx(0.05, abs=1e-3) and outc["reward_hit"]["diff"] == 0
    assert set(result["rewards"]["prosfi"]["runs"]) == {"s1", "s2", "s3"}
    h2h = result["head_to_head"]
    assert h2h["reward_hit"]["diff"] == pytest.approx(0.5, abs=1e-3)
    assert h2h["accuracy"]["diff"] == pytest.approx(-0.03, abs=1e-3)
    assert result["shape"]["shows"] and result["shape"]["line"].startswith("expected shape: SHOWN")


@pytest.mark.parametrize(("outcome_after", "prosfi_after", "failed"), [
    ((0.65, 0.0), (0.40, 0.40), ["prosfi keeps accuracy"]),
    ((0.65, 0.0), (0.60, 0.0), ["prosfi raises reward hit", "prosfi beats outcome on reward hit after GRPO"]),
    ((0.65, 0.50), (0.62, 0.50), ["outcome does not raise reward hit",
                                  "prosfi beats outcome on reward hit after GRPO"]),
    ((0.30, 0.0), (0.62, 0.50), ["outcome keeps accuracy"]),
])
def test_each_failed_part_is_named_in_the_shape_line(outcome_after, prosfi_after, failed):
    result = compare(_runs(outcome_after, prosfi_after), n_boot=500)
    shape = result["shape"]
    assert not shape["shows"]
    assert [name for name, p in shape["parts"].items() if not p["ok"]] == failed
    assert shape["line"].startswith("expected shape: NOT shown")
    for name in failed:
        assert f"{name}: no (" in shape["line"]


def test_pairing_is_by_problem_id_and_only_shared_problems_count():
    runs = _runs()
    runs["prosfi"]["s1"]["after"] = {pid: v for pid, v in runs["prosfi"]["s1"]["after"].items() if pid != "p0"}
    shuffled = dict(sorted(runs["outcome"]["s2"]["after"].items(), reverse=True))
    runs["outcome"]["s2"]["after"] = shuffled
    result = compare(runs, n_boot=200)
    assert result["rewards"]["prosfi"]["runs"]["s1"]["accuracy"]["n"] == N - 1
    assert result["rewards"]["outcome"]["runs"]["s2"]["accuracy"]["diff"] == pytest.approx(0.05, abs=1e-3)
    assert result["head_to_head"]["accuracy"]["n"] == 3 * N - 1


def test_table_rows_and_head_to_head_only_over_seeds_both_ran():
    runs = _runs()
    runs["outcome"].pop("s3")
    result = compare(runs, n_boot=200)
    text = table(result)
    rows = text.splitlines()
    assert rows[0].startswith("reward") and len(rows) == 1 + (2 + 1) + (3 + 1) + 2
    assert [r.split()[:2] for r in rows[1:8]] == [["outcome", "s1"], ["outcome", "s2"], ["outcome", "pooled"],
                                                ["prosfi", "s1"], ["prosfi", "s2"], ["prosfi", "s3"],
                                                ["prosfi", "pooled"]]
    assert "0.600 -> 0.620  +2.0 [" in rows[7] and "0.000 -> 0.500  +50.0 [" in rows[7]
    assert result["head_to_head"]["seeds"] == ["s1", "s2"] and f"(paired, {2 * N} problem-runs over 2 seed(s))" in text
    assert rows[-1] == result["shape"]["line"]
    with pytest.raises(ValueError, match="no runs for outcome"):
        compare({"prosfi": runs["prosfi"], "outcome": {}})


def _write_run(run: Path, stages: dict) -> Path:
    for stage, rows in stages.items():
        (run / f"eval_{stage}").mkdir(parents=True)
        lines = [{"problem_id": pid, "source": "toy", "difficulty": "1", "answer_correct": bool(v["accuracy"]),
                  "chain_valid": bool(v["reward_hit"])} for pid, v in rows.items()]
        (run / f"eval_{stage}" / "completions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return run


def test_cli_reads_run_folders_writes_table_json_and_png(tmp_path, capsys):
    runs = _runs(seeds=("s11", "s12"))
    dirs = {r: [str(_write_run(tmp_path / f"{r}-{s}", summ)) for s, summ in runs[r].items()] for r in runs}
    loaded = load_run(dirs["prosfi"][0])
    assert {k: v for k, v in loaded.items() if k != "answers"} == runs["prosfi"]["s11"]
    assert loaded["answers"]["after"]["top_answer"] is None  # these stand-in records carry no answers
    out = tmp_path / "cmp"
    assert main(["--prosfi", *dirs["prosfi"], "--outcome", *dirs["outcome"], "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "prosfi   s11" in printed and "expected shape: SHOWN" in printed
    assert (out / "comparison.txt").read_text().startswith("reward")
    assert json.loads((out / "comparison.json").read_text())["shape"]["shows"] is True
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a shape that does not show exits 1; a folder without its evaluations exits 2
    bad = _write_run(tmp_path / "prosfi-bad", {"before": _by_index(*WARM), "after": _by_index(0.2, 0.2)})
    assert main(["--prosfi", str(bad), "--outcome", dirs["outcome"][0]]) == 1
    assert "expected shape: NOT shown" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["--prosfi", str(tmp_path / "empty"), "--outcome", dirs["outcome"][0]]) == 2


def test_plot_writes_a_png(tmp_path):
    path = plot(compare(_runs(), n_boot=200), tmp_path / "c.png")
    assert path.stat().st_size > 5000


_STUB_PROSFI = r'''#!/usr/bin/env bash
# stand-in for `prosfi train`: records its call, writes held-out evaluations (prosfi raises reward hit)
printf "%s\n" "$*" >> "$CALLS"
out=""; while [[ $# -gt 0 ]]; do [[ "$1" == --output_dir ]] && out="$2"; shift; done
mkdir -p "$out/sft"
exec "$PY" - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
hit = 0.5 if out.name.startswith("prosfi-") else 0.0
for stage, h in (("before", 0.0), ("after", hit)):
    (out / f"eval_{stage}").mkdir(exist_ok=True)
    rows = [{"problem_id": f"p{i}", "source": "toy", "difficulty": "1", "answer_correct": i < 60,
             "chain_valid": i < 100 * h} for i in range(100)]
    (out / f"eval_{stage}" / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
PY
'''


def test_ablation_launcher_runs_both_rewards_from_one_warm_up_per_seed(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    root = Path(__file__).resolve().parents[1]
    bin_dir, calls, out = tmp_path / "bin", tmp_path / "calls.log", tmp_path / "abl"
    bin_dir.mkdir()
    (bin_dir / "prosfi").write_text(_STUB_PROSFI)
    (bin_dir / "prosfi").chmod(0o755)
    (bin_dir / "python").write_text(f'#!/usr/bin/env bash\nexec {sys.executable} "$@"\n')
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(root), "CALLS": str(calls),
           "PY": sys.executable, "SEEDS": "4 5", "OUT": str(out)}
    proc = subprocess.run(["bash", str(root / "launch" / "demo_ablation.sh"), "--max_steps", "3"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = calls.read_text().splitlines()
    assert len(lines) == 4
    for seed, (pro, outc) in zip((4, 5), zip(lines[::2], lines[1::2])):
        assert pro.startswith("train recipes/demo/cpu_chains.yaml --seed") and f"--seed {seed} " in pro
        assert outc.startswith("train recipes/demo/cpu_chains_outcome.yaml --sft false --model_name_or_path "
                               f"{out}/prosfi-s{seed}/sft --seed {seed} ")
        assert pro.endswith("--max_steps 3") and outc.endswith("--max_steps 3")
    assert "prosfi   s4" in proc.stdout and "outcome  pooled" in proc.stdout
    assert "expected shape: SHOWN" in proc.stdout
    assert {p.name for p in out.glob("comparison.*")} == {"comparison.txt", "comparison.json", "comparison.png"}


def _spread(top_share: float, answer: str = "True") -> dict:
    return {"n_problems": N, "top_answer": answer, "top_share": top_share, "majority_answer": "True",
            "majority_baseline": 0.52, "constant": top_share >= 0.95}


def test_a_constant_answerer_fails_its_verdict_and_the_shape_and_the_table_says_so():
    # issue #36: accuracy 0.52 before and after was the share of True problems; the table and the shape must
    # not read a constant answerer's "kept" accuracy as kept
    runs = _runs()
    for seed in runs["prosfi"]:
        runs["prosfi"][seed]["answers"] = {"before": _spread(1.0), "after": _spread(1.0)}
        runs["outcome"][seed]["answers"] = {"before": _spread(1.0), "after": _spread(0.6, "False")}
    result = compare(runs, n_boot=300)
    pro = result["rewards"]["prosfi"]
    assert pro["runs"]["s1"]["soundness_up"] and pro["runs"]["s1"]["accuracy_kept"]  # the intervals alone
    assert not pro["runs"]["s1"]["holds"] and pro["pooled"]["constant_after"] == 3 and not pro["pooled"]["holds"]
    assert result["rewards"]["outcome"]["pooled"]["constant_after"] == 0
    shape = result["shape"]
    assert not shape["shows"] and not shape["parts"]["every policy reads the problems after GRPO"]["ok"]
    assert "every policy reads the problems after GRPO: no (runs whose policy gives one answer to >= 95 % of " \
           "the problems after GRPO: outcome 0, prosfi 3)" in shape["line"]
    text = table(result)
    rows = text.splitlines()
    assert rows[5].startswith("prosfi   s1") and rows[5].endswith("hit up, acc kept, CONSTANT answers after GRPO")
    assert "  prosfi s1: 1.000 (True) CONSTANT -> 1.000 (True) CONSTANT, baseline 0.520" in rows
    assert "  outcome s1: 1.000 (True) CONSTANT -> 0.600 (False), baseline 0.520" in rows
