"""Issue 27, "errors are quick": the usual `prosfi train` mistakes are refused before the training stack is
imported (no trl, transformers or torch in the process), in the same one line the full check prints; the
shipped recipes pass the quick check, and its list of TRL's keys matches the installed TRL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from prosfi.train.fastcheck import file_source, quick_refusal

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "recipes" / "demo" / "cpu_chains.yaml")

PROBE = """
import json, sys
from prosfi.cli import main
rc = main(sys.argv[1:])
print(json.dumps([rc, sorted(m for m in ("trl", "transformers", "torch") if m in sys.modules)]))
"""


def _run(tmp_path, *argv):
    proc = subprocess.run([sys.executable, "-c", PROBE, "train", *argv], check=False, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    rc, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    return rc, imported, proc.stderr.strip()


@pytest.mark.parametrize("argv,needle", [
    (["nope.yaml"], "recipe not found: nope.yaml"),
    ([DEMO, "--learning_rat", "1e-5"], "did you mean learning_rate"),
    ([DEMO, "--model_name_or_path", "./no-model", "--no_tiny_model_if_absent"], None),  # lenient: full check
    ([DEMO, "--dataset", "jsonl", "--dataset_path", "missing.jsonl"], "dataset_path: no such file missing.jsonl"),
    ([DEMO, "--dataset", "gsm8k", "--dataset_path", "gsm8k_test.jsonl"], "dataset_path: no such file gsm8k_test.jsonl; "),
    ([DEMO, "--dry-run", "--learning_rate", "-1"], "learning_rate: -1 must be > 0"),
    ([DEMO, "--dry-run", "--max_steps", "-5"], "max_steps: -5 must be > 0, or -1 to train by num_train_epochs"),
    ([DEMO, "--dry-run", "--temperature", "0"], "temperature: 0 must be > 0"),
    ([DEMO, "--dry-run", "--max_steps", "ten"], "max_steps: 'ten' is not a whole number"),
    ([DEMO, "--dry-run", "--learning_rate", "fast"], "learning_rate: 'fast' is not a number"),
])
def test_train_mistakes_are_refused_before_the_imports(tmp_path, argv, needle):
    if needle is None:
        assert quick_refusal(argv[0], argv[1:]) is None
        return
    rc, imported, err = _run(tmp_path, *argv)
    assert rc == 2 and imported == [], (rc, imported, err)
    assert len(err.splitlines()) == 1 and err.startswith("prosfi train: error: ") and needle in err, err


def test_value_ranges_hold_in_recipes_and_in_the_full_check(tmp_path):
    (tmp_path / "r.yaml").write_text("max_steps: 0\nlearning_rate: 1.0e-5\n")
    assert quick_refusal(str(tmp_path / "r.yaml"), []).startswith("max_steps: 0 must be > 0")
    assert quick_refusal(DEMO, ["--max_steps", "-1", "--temperature", "0.7"]) is None  # -1: by epochs
    from types import SimpleNamespace

    from prosfi.train.preflight import preflight
    from prosfi.train.recipe import RecipeError

    resolved = SimpleNamespace(training=SimpleNamespace(learning_rate=1e-5, max_steps=10, temperature=-0.5),
                               script=SimpleNamespace(sft_learning_rate=1e-4))
    with pytest.raises(RecipeError, match="temperature: -0.5 must be > 0"):
        preflight(resolved)  # a config built in Python, not through the command line


def test_recipe_typos_and_bad_yaml_are_quick(tmp_path):
    (tmp_path / "typo.yaml").write_text("learning_rat: 1e-5\n")
    (tmp_path / "bad.yaml").write_text("foo: [\n")
    assert "did you mean learning_rate" in quick_refusal(str(tmp_path / "typo.yaml"), [])
    assert "not valid YAML at line 2" in quick_refusal(str(tmp_path / "bad.yaml"), [])
    assert "no model at ./nope" in quick_refusal(None, ["--model_name_or_path", "./nope"])  # the full check's words
    assert quick_refusal(None, ["--model_name_or_path", "./nope", "--tiny_model_if_absent", "true"]) is None
    (tmp_path / "a_file").write_text("")
    assert "is a file" in quick_refusal(None, ["--output_dir", str(tmp_path / "a_file")])


def test_the_shipped_training_recipes_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for recipe in sorted((ROOT / "recipes").rglob("*.yaml")):
        if "accelerate_configs" in recipe.parts or "prm" in recipe.parts:  # not `prosfi train` recipes
            continue
        refusal = quick_refusal(str(recipe), [])
        model = str(yaml.safe_load(recipe.read_text())["model_name_or_path"])
        if recipe.name.startswith("gpu_") and model.startswith("runs/"):  # `prosfi model smollm2` writes it
            assert refusal is not None and f"no model at {model}" in refusal, recipe
        elif file_source(yaml.safe_load(recipe.read_text()).get("dataset")) is not None:  # GSM8K: user's copy
            path = yaml.safe_load(recipe.read_text())["dataset_path"]
            assert refusal is not None and refusal.startswith(f"dataset_path: no such file {path}; "), recipe
        else:
            assert refusal is None, recipe


def test_the_listed_trl_keys_are_the_installed_trls():
    pytest.importorskip("trl")
    from prosfi.train.fastcheck import known_keys
    from prosfi.train.recipe import make_parser, parser_dests, parser_flags
    from prosfi.train.trl_keys import _generate

    parser = make_parser()
    live = set(parser_dests(parser)) | set(parser_flags(parser))
    assert known_keys() is not None, "regenerate prosfi/train/trl_keys.py: python -m prosfi.train.trl_keys"
    assert set(_generate()) <= known_keys() and live <= known_keys()


def test_every_file_source_gets_the_quick_path_check(tmp_path):
    """Which datasets need `dataset_path` is the registry's word (`DataSource.needs_path`), not a name list."""
    from prosfi.data.sources import SOURCES
    wanted = {name for name, source in SOURCES.items() if source.needs_path}
    assert {"jsonl", "gsm8k"} <= wanted
    assert {name for name in SOURCES if file_source(name) is not None} == wanted
    assert file_source("nope") is None and file_source(None) is None
