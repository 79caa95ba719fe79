"""Recipe resolution: YAML + overrides -> typed configs, nested keys, unknown keys, run names, dry runs.

No model is loaded here; every test runs in well under a second after the imports.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.cli import main as prosfi_main
from prosfi.train.recipe import RecipeError, normalise_overrides, resolve, run_name

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "recipes").rglob("*.yaml"))
TRAIN_RECIPES = [p for p in RECIPES if "accelerate_configs" not in p.parts and "prm" not in p.parts]  # prm: `prosfi prm train`


def _recipe(tmp_path: Path, body: dict, name: str = "exp.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body))
    return str(path)


BASE = {"model_name_or_path": "some/model", "use_cpu": True, "bf16": False, "per_device_train_batch_size": 4,
        "num_generations": 2, "report_to": "none"}


def test_yaml_values_get_the_field_type(tmp_path):
    # YAML 1.1 reads `5e-6` as a string; the field is a float and must become one.
    r = resolve(_recipe(tmp_path, {**BASE, "learning_rate": "5e-6", "max_steps": "3"}), [])
    assert r.training.learning_rate == pytest.approx(5e-6) and isinstance(r.training.learning_rate, float)
    assert r.training.max_steps == 3 and isinstance(r.training.max_steps, int)


def test_command_line_overrides_win_and_are_typed(tmp_path):
    r = resolve(_recipe(tmp_path, {**BASE, "learning_rate": 1e-5, "beta": 0.0, "gradient_checkpointing": True}),
                ["--learning_rate", "2e-6", "--beta=0.01", "--use-peft", "--lora_target_modules", "q_proj", "v_proj",
                 "--no_gradient_checkpointing"])
    assert r.training.learning_rate == pytest.approx(2e-6)
    assert r.training.gradient_checkpointing is False
    assert r.training.beta == pytest.approx(0.01)
    assert r.model.use_peft is True
    assert r.model.lora_target_modules == ["q_proj", "v_proj"]


def test_nested_yaml_and_dotted_overrides_reach_the_reward_and_verifier_configs(tmp_path):
    from prosfi.train.config import sub_config

    body = {**BASE, "reward": {"wrong_answer": 0.05, "right_verified": 2.0},
            "verifier": {"backends": ["z3"], "timeout_ms": 750, "workers": 1}}
    r = resolve(_recipe(tmp_path, body), ["--reward.right_unverified", "0.5", "--chain.max_dependencies=3"])
    reward = sub_config(r.script, "reward")
    assert (reward.wrong_answer, reward.right_unverified, reward.right_verified) == (0.05, 0.5, 2.0)
    assert sub_config(r.script, "chain").max_dependencies == 3
    verifier = sub_config(r.script, "verifier")
    assert verifier.backends == ("z3",) and verifier.timeout_ms == 750 and verifier.workers == 1


@pytest.mark.parametrize("where", ["yaml", "cli"])
def test_unknown_keys_are_rejected_with_close_matches(tmp_path, where):
    body = dict(BASE)
    overrides: list[str] = []
    if where == "yaml":
        body["reward"] = {"right_verifed": 1.0}
    else:
        overrides = ["--learning_rat", "1e-5"]
    with pytest.raises(RecipeError) as err:
        resolve(_recipe(tmp_path, body), overrides)
    msg = str(err.value)
    if where == "yaml":
        assert "'reward_right_verifed'" in msg and "reward_right_verified" in msg
    else:
        assert "'learning_rat'" in msg and "learning_rate" in msg


def test_bad_values_name_the_key(tmp_path):
    with pytest.raises(RecipeError, match="--max_steps"):
        resolve(_recipe(tmp_path, BASE), ["--max_steps", "many"])
    with pytest.raises(RecipeError, match="dataset"):
        resolve(_recipe(tmp_path, {**BASE, "dataset": "imagenet"}), [])
    with pytest.raises(RecipeError, match="reward_mode"):
        resolve(_recipe(tmp_path, BASE), ["--reward_mode", "vibes"])
    # the reward levels' own check (they must be ordered) runs at resolve time, so --dry-run catches it
    with pytest.raises(RecipeError, match="right_unverified"):
        resolve(_recipe(tmp_path, {**BASE, "reward": {"right_unverified": 2.0}}), [])
    # a __post_init__ check of TRL's config surfaces as a RecipeError too
    with pytest.raises(RecipeError, match="num_generations"):
        resolve(_recipe(tmp_path, BASE), ["--num_generations", "3"])


def test_run_name_and_output_dir_follow_recipe_and_overrides(tmp_path):
    r = resolve(_recipe(tmp_path, BASE, "prosfi_kk.yaml"), ["--learning_rate", "2e-6", "--beta", "0.01",
                                                             "--report_to", "none", "--vllm_server_host", "node7"])
    assert r.training.run_name == "prosfi_kk-lr=2e-6-beta=0.01"
    assert Path(r.training.output_dir) == Path("runs") / "prosfi_kk-lr=2e-6-beta=0.01"
    explicit = resolve(_recipe(tmp_path, {**BASE, "output_dir": str(tmp_path / "o")}, "a.yaml"), ["--seed", "3"])
    assert explicit.training.output_dir == str(tmp_path / "o") and explicit.training.run_name == "a-seed=3"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.from_regex(r"[a-z][a-z0-9_]{0,12}(\.[a-z][a-z0-9_]{0,12}){0,2}", fullmatch=True),
       value=st.from_regex(r"[A-Za-z0-9.=,+-]{1,10}", fullmatch=True))
def test_override_normalisation_is_equal_for_all_spellings(key, value):
    flat = key.replace(".", "_")
    expected = ["--" + flat, value]
    assert normalise_overrides(["--" + key, value]) == expected
    assert normalise_overrides([f"--{key}={value}"]) == expected
    assert normalise_overrides(["--" + key.replace("_", "-"), value]) == expected
    # run names stay filesystem-safe whatever the values
    assert "/" not in run_name("r.yaml", [(flat, value)])


def test_resume_auto_finds_the_last_checkpoint(tmp_path):
    out = tmp_path / "out"
    body = {**BASE, "output_dir": str(out), "resume_from_checkpoint": "auto"}
    assert resolve(_recipe(tmp_path, body), []).training.resume_from_checkpoint is None
    for step in (2, 10):
        (out / f"checkpoint-{step}").mkdir(parents=True)
        (out / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    r = resolve(_recipe(tmp_path, body), [])
    assert r.training.resume_from_checkpoint == str(out / "checkpoint-10")
    assert resolve(_recipe(tmp_path, body), ["--resume_from_checkpoint", "false"]).training.resume_from_checkpoint \
        is None


def _made_by_a_command(raw: dict) -> bool:
    """The recipe's model is a local folder under runs/ that it does not build itself (the GPU experiment's
    SmolLM2 folder, written by `prosfi model smollm2`)."""
    return str(raw["model_name_or_path"]).startswith("runs/") and not raw.get("tiny_model_if_absent")


@pytest.mark.parametrize("recipe", TRAIN_RECIPES, ids=lambda p: str(p.relative_to(ROOT / "recipes")))
def test_every_shipped_recipe_resolves_with_dry_run(recipe, capsys, monkeypatch, tmp_path):
    import shutil

    monkeypatch.chdir(tmp_path)  # dry runs must not create anything
    monkeypatch.setenv("WANDB_MODE", "offline")  # the GPU recipes log to wandb: no login needed offline
    raw = yaml.safe_load(recipe.read_text())
    if raw.get("dataset_path") and not (tmp_path / raw["dataset_path"]).exists():
        # a data file the project does not ship (GSM8K's train split): the dry run checks it is there
        assert prosfi_main(["train", str(recipe), "--dry-run"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"dataset_path: no such file {raw['dataset_path']}" in err
        printed = resolve(str(recipe), [], dry_run=True).as_dict()  # the recipe itself resolves
    elif _made_by_a_command(raw):
        # a model folder a documented command writes (`prosfi model smollm2 --out runs/smollm2`): the dry
        # run names it in one line, as a real run would
        assert prosfi_main(["train", str(recipe), "--dry-run"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"no model at {raw['model_name_or_path']}" in err
        printed = resolve(str(recipe), [], dry_run=True).as_dict()  # the recipe itself resolves
    elif raw.get("reward_mode") == "direct_lean" and not shutil.which("lake"):
        # the dry run checks Lean as the run would: one line saying what to install, exit 2
        assert prosfi_main(["train", str(recipe), "--dry-run"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "needs Lean" in err
        printed = resolve(str(recipe), [], dry_run=True).as_dict()  # the recipe itself resolves
    else:
        assert prosfi_main(["train", str(recipe), "--dry-run"]) == 0
        printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["recipe"] == str(recipe)
    assert printed["model"]["model_name_or_path"] == raw["model_name_or_path"]
    assert printed["script"]["reward_mode"] == raw["reward_mode"]
    assert list(tmp_path.iterdir()) == []


def test_gpu_recipes_log_to_wandb_and_use_vllm():
    for recipe in TRAIN_RECIPES:
        raw = yaml.safe_load(recipe.read_text())
        if "demo" in recipe.parts:  # CPU demos, and the one-GPU experiment (gpu_*: bf16, HF generation)
            one_gpu = recipe.name.startswith("gpu_")
            assert raw["report_to"] == "none" and raw["use_cpu"] is not one_gpu and raw.get("bf16", False) is one_gpu
        else:
            assert raw["report_to"] == ["wandb"] and raw["log_completions"] is True
            assert raw["use_vllm"] is True and raw["vllm_mode"] in ("server", "colocate")


def test_cli_reports_unknown_keys_without_a_traceback(capsys):
    recipe = str(ROOT / "recipes" / "demo" / "cpu_kk.yaml")
    assert prosfi_main(["train", recipe, "--learning_rte", "1", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'learning_rte'" in err and "learning_rate" in err


def test_accelerate_configs_are_valid():
    for name, kind in (("multi_gpu", "MULTI_GPU"), ("zero2", "DEEPSPEED"), ("zero3", "DEEPSPEED")):
        cfg = yaml.safe_load((ROOT / "recipes" / "accelerate_configs" / f"{name}.yaml").read_text())
        assert cfg["distributed_type"] == kind
        if kind == "DEEPSPEED":
            assert cfg["deepspeed_config"]["zero_stage"] == int(name[-1])


def test_summary_reads_headlines_from_logged_rows():
    from prosfi.train.summary import summarize

    rows = [{"step": i, "reward": 0.1 * i, "rewards/prosfi_reward/std": 9.0, "prosfi/answer_accuracy": i / 10,
             "prosfi/chain_valid_rate": 0.0, "prosfi/format_rate": 1.0} for i in range(1, 7)]
    rows.append({"step": 6, "train_runtime": 12.0})  # the final row carries no reward: not a GRPO step
    s = summarize(rows, "r", window=2)
    assert s.steps == 6
    assert s.rows["reward"] == ("reward", pytest.approx(0.15), pytest.approx(0.55))
    assert s.rows["answer accuracy"][0] == "prosfi/answer_accuracy"
    assert s.rows["chain validity"][1:] == (0.0, 0.0)
    assert "format rate" in s.to_text() and "0.550" in s.to_text()


def test_appended_log_keeps_every_row_and_reads_back_the_current_run(tmp_path):
    import json

    from prosfi.train.rundir import mark_run
    from prosfi.train.summary import read_rows, run_rows

    path = tmp_path / "metrics.jsonl"
    mark_run(path, "a", None)
    path.open("a").write("".join(json.dumps({"step": i, "reward": 0.0}) + "\n" for i in range(1, 6)))
    mark_run(path, "a", 3)  # resumed from checkpoint-3: steps 4 and 5 are logged again
    path.open("a").write("".join(json.dumps({"step": i, "reward": 1.0}) + "\n" for i in (4, 5)))
    assert [r["step"] for r in run_rows(path)] == [1, 2, 3, 4, 5]
    assert [r["reward"] for r in run_rows(path)] == [0.0] * 3 + [1.0] * 2
    assert len(read_rows(path)) == 2 + 5 + 2  # nothing was truncated
    mark_run(path, "b", None)  # a fresh run (--overwrite) appends too
    path.open("a").write(json.dumps({"step": 1, "reward": 0.5}) + "\n{torn")
    assert run_rows(path) == [{"step": 1, "reward": 0.5}]
    assert len(read_rows(path)) == 2 + 5 + 2 + 2


def test_dataset_spec_yields_the_requested_problems():
    from prosfi.train.problems import generate_problems

    kk = generate_problems("kk", 7, seed=3, difficulty="2-3")
    assert len(kk) == 7 and {len(p.atoms) for p in kk} == {2, 3}
    pqa = generate_problems("proverqa_gen", 9, seed=3, difficulty="easy", exclude_uncertain=True)
    assert len(pqa) == 9 and "Uncertain" not in {p.answer_label for p in pqa}
    with pytest.raises(ValueError, match="dataset_difficulty"):
        generate_problems("kk", 2, difficulty="many")
