"""The quantity chain rules set from a recipe and the command line (issue #25, "One source for the rules"):
`ChainConfig.quantity_max_ops / quantity_rel_tol / quantity_trials` (recipe keys `chain_quantity_*`, flags
`--quantity-*` on `prosfi score`, `prosfi eval` and `prosfi prm label`) reach the quantity chain's
`QuantityRules` and change a score.

Until the quantity chain reads them (`rules or config.quantity_rules(DEFAULT_RULES)` in
`QuantityChainCheck.__init__`), the fixture `chain_reads_config` makes it do so for these tests."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from prosfi.chain import ChainConfig
from quant_chain_support import EGGS, EGGS_GOLD, completion

ROOT = Path(__file__).resolve().parents[1]
# s1 = g1 - g2 - g3 is two operations: within the default max_ops, over a max_ops of 1
GOLD = completion(EGGS_GOLD, "18 USD")


def _has_trials() -> bool:
    import dataclasses

    from prosfi.domains.quantity import QuantityRules

    return "trials" in {f.name for f in dataclasses.fields(QuantityRules)}


HAS_TRIALS = _has_trials()  # grounding by dependence (the rules being rewritten in main) adds it


@pytest.fixture
def chain_reads_config(monkeypatch):
    from prosfi.domains.quantity import chain as qchain

    init = qchain.QuantityChainCheck.__init__
    if "quantity_rules" in inspect.getsource(init):
        return  # wired in the chain itself
    signature = inspect.signature(init)

    def reading(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if signature.bind(self, *args, **kwargs).arguments.get("rules") is None:
            self.rules = self.config.quantity_rules(qchain.DEFAULT_RULES)

    monkeypatch.setattr(qchain.QuantityChainCheck, "__init__", reading)


def test_unset_rules_are_the_domains_defaults_and_set_ones_replace_only_themselves():
    from prosfi.domains.quantity import DEFAULT_RULES

    assert ChainConfig().quantity_rules(DEFAULT_RULES) is DEFAULT_RULES
    rules = ChainConfig(quantity_max_ops=1, quantity_rel_tol=1e-3).quantity_rules(DEFAULT_RULES)
    assert rules.max_ops == 1 and rules.tolerance.rel == 1e-3
    assert rules.tolerance.sigfigs == DEFAULT_RULES.tolerance.sigfigs  # the tolerance's other settings kept
    assert rules.tolerance.abs_eps == DEFAULT_RULES.tolerance.abs_eps
    assert rules.perturbation == DEFAULT_RULES.perturbation


@pytest.mark.parametrize("kwargs", [{"quantity_max_ops": -1}, {"quantity_trials": 1.5}, {"quantity_max_ops": True},
                                    {"quantity_rel_tol": float("nan")}, {"quantity_rel_tol": -0.1}])
def test_chain_config_refuses_rule_values_the_rules_cannot_take(kwargs):
    with pytest.raises(ValueError, match="ChainConfig.quantity_"):
        ChainConfig(**kwargs)


def _score(chain_config) -> float:
    from prosfi.rewards import RewardConfig, score_completion
    from prosfi.verify.verifier import Verifier

    with Verifier() as verifier:  # quantity steps are worked out in-process; no prover is called
        return score_completion(EGGS, GOLD, verifier, RewardConfig(mode="prosfi"), chain_config).reward


def test_a_rule_set_in_the_chain_config_changes_the_reward(chain_reads_config):
    assert _score(ChainConfig()) == 1.0
    assert _score(ChainConfig(quantity_max_ops=1)) == 0.3  # the right answer, its chain no longer verified
    assert _score(ChainConfig(quantity_max_ops=0)) == 1.0  # 0: no limit


def test_recipe_keys_reach_the_chain_config(tmp_path):
    pytest.importorskip("trl")
    from prosfi.train.config import sub_config
    from prosfi.train.recipe import RecipeError, resolve

    recipe = tmp_path / "r.yaml"
    recipe.write_text("dataset: physics\nchain:\n  quantity_max_ops: 1\n  quantity_rel_tol: 1.0e-3\n"
                      "report_to: none\nuse_cpu: true\n")
    trials = ["--chain.quantity_trials", "2"] if HAS_TRIALS else []
    script = resolve(str(recipe), trials, dry_run=True).script
    config = sub_config(script, "chain")
    assert (config.quantity_max_ops, config.quantity_rel_tol) == (1, 1e-3)
    assert config.quantity_trials == (2 if HAS_TRIALS else None)
    if HAS_TRIALS:  # the rules' own bound (0..16), checked when the recipe is resolved
        with pytest.raises(RecipeError, match="chain_quantity"):
            resolve(str(recipe), ["--chain.quantity_trials", "99"], dry_run=True)
    assert sub_config(resolve(str(recipe), ["--chain_quantity_max_ops", "5"], dry_run=True).script,
                      "chain").quantity_max_ops == 5
    with pytest.raises(RecipeError, match="quantity_max_ops must be an int >= 0"):
        resolve(str(recipe), ["--chain_quantity_max_ops", "-2"], dry_run=True)


def test_recipe_value_changes_the_training_reward(tmp_path, chain_reads_config):
    """The reward functions a run builds (`grpo.make_rewards`) score with the recipe's rule."""
    pytest.importorskip("trl")
    from prosfi.train.grpo import make_rewards, make_verifier
    from prosfi.train.recipe import resolve

    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"dataset: physics\nreport_to: none\nuse_cpu: true\noutput_dir: {tmp_path / 'run'}\n")
    rewards = {}
    for value in (None, "1"):
        script, training = (lambda r: (r.script, r.training))(
            resolve(str(recipe), [] if value is None else ["--chain.quantity_max_ops", value], dry_run=True))
        verifier = make_verifier(script)
        try:
            funcs = make_rewards(script, training, verifier)
            rewards[value] = funcs[0](prompts=["p"], completions=[GOLD], problem=[json.dumps(EGGS.to_dict())])[0]
        finally:
            for f in funcs:
                getattr(f, "close", lambda: None)()
            verifier.close()
    assert rewards == {None: 1.0, "1": 0.3}


def _files(tmp_path: Path) -> tuple[Path, Path]:
    problems, comps = tmp_path / "problems.jsonl", tmp_path / "completions.jsonl"
    problems.write_text(json.dumps(EGGS.to_dict()) + "\n")
    comps.write_text(json.dumps({"problem_id": EGGS.id, "completion": GOLD}) + "\n")
    return problems, comps


def test_score_flag_changes_the_score(tmp_path, capsys, chain_reads_config):
    from prosfi.cli import main

    problems, comps = _files(tmp_path)
    got = {}
    for flags in ([], ["--quantity-max-ops", "1"]):
        assert main(["score", str(problems), str(comps), *flags]) == 0
        got[tuple(flags)] = json.loads(capsys.readouterr().out.splitlines()[0])["reward"]
    assert got == {(): 1.0, ("--quantity-max-ops", "1"): 0.3}


def test_score_refuses_a_bad_rule_value_in_one_line(tmp_path, capsys):
    from prosfi.cli import main

    problems, comps = _files(tmp_path)
    assert main(["score", str(problems), str(comps), "--quantity-max-ops", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("prosfi score: --quantity-max-ops")


def test_eval_flag_changes_the_reward_hit(tmp_path, capsys, chain_reads_config):
    from prosfi.cli import main

    problems, comps = _files(tmp_path)
    hits = {}
    for flags in ([], ["--quantity-max-ops", "1"]):
        out = tmp_path / f"eval{len(flags)}"
        assert main(["eval", "--data", str(problems), "--completions", str(comps), "-o", str(out), "--no-plots",
                     "--no-progress", *flags]) == 0
        hits[len(flags)] = json.loads((out / "summary.json").read_text())["overall"]["reward_hit"]
    capsys.readouterr()
    assert hits == {0: 1.0, 2: 0.0}


def test_prm_label_flag_changes_the_step_labels(tmp_path, capsys, chain_reads_config):
    from prosfi.cli import main

    problems, comps = _files(tmp_path)
    labels = {}
    for flags in ([], ["--quantity-max-ops", "1"]):
        out = tmp_path / f"label{len(flags)}"
        assert main(["prm", "label", "--data", str(problems), "--completions", str(comps), "-o", str(out),
                     "--val-fraction", "0", "--no-progress", *flags]) == 0
        rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
        labels[len(flags)] = rows[0]["labels"]
    capsys.readouterr()
    assert labels[0] == [True, True] and labels[2][0] is False  # s1's two operations are over the limit
