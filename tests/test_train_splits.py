"""A file dataset (GSM8K's JSONL) split into disjoint, non-empty warm-up, GRPO, format-gate and held-out sets
(issue #25, "GSM8K GPU recipes").

Both GSM8K GPU recipes used to crash on a real run: a file is read from its start, so the warm-up's draw
was a prefix of the GRPO set (nothing left once GRPO's problems were removed) and the format gate's
held-out draw came out empty (`IndexError` in the generation step, after a warm-up of hours at 7B). The dry
run did not draw the sets at all for `dataset: gsm8k`. These tests run the recipes' own split settings,
scaled to a 12-record file in GSM8K's format (tests/fixtures/gsm8k_train_small.jsonl, problems written for
these tests), through the functions the run uses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "gsm8k_train_small.jsonl"  # 12 records, all with a gold chain
GSM8K_RECIPES = [ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo" / f"{name}_gsm8k.yaml"
                 for name in ("prosfi", "outcome")]
# the recipes' warm-up and gate sizes scaled to the 12-record file (7473 records -> 12); dataset_size is the
# recipe's own
SCALED = ["--dataset_path", str(FIXTURE), "--sft_size", "4", "--sft_format_check", "2"]


def _resolve(recipe: Path, *overrides: str, tmp_path: Path):
    from prosfi.train.recipe import resolve

    return resolve(str(recipe), [*SCALED, "--output_dir", str(tmp_path / "run"), *overrides], dry_run=True)


def _ids(problems) -> set[str]:
    return {p.id for p in problems}


@pytest.mark.parametrize("recipe", GSM8K_RECIPES, ids=lambda p: p.stem)
def test_warm_up_format_gate_gets_held_out_problems_to_generate_on(recipe, tmp_path, monkeypatch):
    """The crash itself: the warm-up's format gate draws its prompts and hands them to generation. Before
    the fix the draw was empty and the generation step raised IndexError (`problems[0]`)."""
    import prosfi.eval
    from prosfi.train import heldout
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    resolved = _resolve(recipe, tmp_path=tmp_path)
    script, training = resolved.script, resolved.training
    generated: list = []
    monkeypatch.setattr(prosfi.eval, "load_hf", lambda path, device: (None, None))  # no model is loaded
    monkeypatch.setattr(prosfi.eval, "generate_hf",
                        lambda problems, *a, **k: generated.extend(problems) or [])
    monkeypatch.setattr(heldout, "score", lambda gens, problems, *a, **k: {"overall": {"format_rate": 0.75}})
    assert heldout.warm_up_format_rate(script, training, None, "the-warm-up") == 0.75
    assert len(generated) == script.sft_format_check  # the gate's own prompts, as many as the recipe asks
    training_ids = _ids(from_script_args(script)) | _ids(sft_problems(script))
    assert not _ids(generated) & training_ids  # held out: never an SFT or GRPO problem


@pytest.mark.parametrize("recipe", GSM8K_RECIPES, ids=lambda p: p.stem)
def test_gsm8k_recipe_draws_four_disjoint_non_empty_sets(recipe, tmp_path):
    from prosfi.train.heldout import held_out_problems
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    script = _resolve(recipe, "--eval_held_out", "2", tmp_path=tmp_path).script
    grpo, sft = from_script_args(script), sft_problems(script)
    gate = held_out_problems(script, script.sft_format_check, role="gate")
    held = held_out_problems(script)
    sets = {"grpo": _ids(grpo), "sft": _ids(sft), "gate": _ids(gate), "eval": _ids(held)}
    assert {k: len(v) for k, v in sets.items()} == {"grpo": 4, "sft": 4, "gate": 2, "eval": 2}
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not sets[a] & sets[b], f"{a} and {b} share problems"
    # drawn again (a resumed run, the held-out evaluation after GRPO): the same sets
    assert _ids(held_out_problems(script)) == sets["eval"] and _ids(sft_problems(script)) == sets["sft"]


def test_dry_run_reports_the_sets_a_real_run_draws(tmp_path, capsys):
    from prosfi.cli import main

    recipe = str(GSM8K_RECIPES[0])
    assert main(["train", recipe, *SCALED, "--eval_held_out", "2", "--output_dir", str(tmp_path / "r"),
                 "--dry-run"]) == 0
    data = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# data:")]
    assert data == ["# data: 4 GRPO problems, 4 SFT problems, 2 format-gate problems, 2 held-out problems "
                    f"(of {FIXTURE.name}'s 12)"]


def _one_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("prosfi train: error: "), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_dry_run_refuses_a_missing_data_file(tmp_path, capsys):
    from prosfi.cli import main

    missing = tmp_path / "data" / "gsm8k" / "train.jsonl"
    assert main(["train", str(GSM8K_RECIPES[0]), "--dataset_path", str(missing), "--output_dir",
                 str(tmp_path / "r"), "--dry-run"]) == 2
    line = _one_error(capsys)
    assert f"dataset_path: no such file {missing}" in line and "grade-school-math" in line


@pytest.mark.parametrize("overrides, words", [
    # the recipe's own sizes on a 12-record file: the warm-up and the gate do not fit
    ([], ["sft_size 2000", "sft_format_check 64", "12 usable problems"]),
    (["--sft_size", "4", "--sft_format_check", "2", "--dataset_size", "7"], ["dataset_size 7", "at most 6"]),
    (["--sft_size", "4", "--sft_format_check", "2", "--eval_held_out", "6"], ["eval_held_out 6"]),
])
def test_a_file_too_small_for_the_sets_fails_in_one_line_before_anything_loads(overrides, words, tmp_path,
                                                                               capsys, monkeypatch):
    from prosfi.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # were the check to pass, the 7B model would not be fetched
    assert main(["train", str(GSM8K_RECIPES[0]), "--dataset_path", str(FIXTURE), "--output_dir",
                 str(tmp_path / "r"), "--use_cpu", "true", *overrides]) == 2  # a real run, refused by its preflight
    line = _one_error(capsys)
    assert all(w in line for w in words), line
    assert not (tmp_path / "r").exists()  # nothing written, nothing loaded


def test_prosfi_sft_on_a_recipe_without_warm_up_still_gets_its_sets(tmp_path):
    """`prosfi sft RECIPE --sft false` warms up and gates all the same: both sets are drawn."""
    from prosfi.train.heldout import held_out_problems
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    script = _resolve(GSM8K_RECIPES[0], "--sft", "false", tmp_path=tmp_path).script
    sft, gate = sft_problems(script), held_out_problems(script, script.sft_format_check, role="gate")
    assert len(sft) == 4 and len(gate) == 2 and not _ids(sft) & _ids(gate)
    assert len(from_script_args(script)) == 12  # a GRPO-only run of the file takes it whole


def test_file_sets_do_not_move_when_the_training_share_changes(tmp_path):
    """The held-out sets come from the file's end, so a run with another dataset_size or sft_size (an
    ablation) is evaluated on the same problems."""
    from prosfi.train.heldout import held_out_problems

    a = _resolve(GSM8K_RECIPES[0], "--eval_held_out", "3", tmp_path=tmp_path).script
    b = _resolve(GSM8K_RECIPES[0], "--eval_held_out", "3", "--dataset_size", "2", "--sft_size", "2",
                 tmp_path=tmp_path).script
    assert _ids(held_out_problems(a)) == _ids(held_out_problems(b))
    assert _ids(held_out_problems(a, 2, role="gate")) == _ids(held_out_problems(b, 2, role="gate"))


def test_generated_dataset_gate_and_held_out_are_disjoint(tmp_path):
    """Generated datasets draw the gate with its own seed: it shares no problem with the held-out set."""
    from prosfi.train.heldout import held_out_problems
    from prosfi.train.recipe import resolve

    script = resolve(str(ROOT / "recipes" / "demo" / "cpu_quant.yaml"),
                     ["--eval_held_out", "20", "--sft_size", "50", "--dataset_size", "20", "--output_dir",
                      str(tmp_path / "q")], dry_run=True).script
    from prosfi.domains import domain_for

    def keys(ps):
        return {domain_for(p).content_key(p) for p in ps}

    gate, held = held_out_problems(script, 10, role="gate"), held_out_problems(script)
    assert len(gate) == 10 and len(held) == 20 and not keys(gate) & keys(held)
