"""verl 0.9.1 as it is today: which keys its `main_ppo` reads, which reward managers its reward loop knows,
and `prosfi.integrations.verl_check`, which refuses a launch that would not reach prosfi.

The tests marked `verl` drive verl's own code (`pip install --no-deps verl==0.9.1` plus hydra-core,
tensordict; skipped without them): verl's Hydra config `verl/trainer/config/ppo_trainer.yaml` composed with
the overrides of docs/serving.md, then `verl.experimental.reward_loop.reward_loop.RewardLoopWorker` (what the
0.9.1 trainer runs for rewards: `load_reward_manager` -> `get_custom_reward_fn` -> the registered manager's
`run_single`). The others check `verl_check` against the same key layout, read from verl 0.9.1's
`ppo_trainer.yaml`, `reward/reward.yaml`, `legacy_reward_impl.yaml` and `workers/config/reward.py`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from serve_support import completions, logic_problems

from prosfi.integrations import verl_check
from prosfi.integrations.local import score_problems

pytestmark = pytest.mark.timeout(300)

OURS = verl_check._our_file()
DOCS = Path(__file__).resolve().parents[1] / "docs" / "serving.md"


def refusals(settings, version="0.9.1", new=True):
    return verl_check.check(settings, version, new)[0]


def docs_overrides() -> list[str]:
    """The Hydra overrides of docs/serving.md's verl bash example (the $(...) path resolved here)."""
    text = DOCS.read_text()
    block = re.search(r"```bash\n(?:export [^\n]*\n)?python -m verl\.trainer\.main_ppo(.*?)```", text, re.DOTALL)
    assert block, "docs/serving.md has no verl main_ppo example"
    cmd = block.group(1).replace("\\\n", " ").replace("...", " ")
    cmd = re.sub(r"\$\(python -c \"[^\"]*\"\)", OURS, cmd)
    return [a for a in shlex.split(cmd) if "=" in a]


def test_the_documented_setup_passes_and_old_keys_are_refused_with_the_new_key_named():
    overrides = docs_overrides()
    settings = verl_check.read_settings(overrides)
    assert settings["reward.custom_reward_function.path"] == OURS
    assert refusals(settings) == []
    old = {"custom_reward_function.path": OURS, "custom_reward_function.name": "compute_score_batch",
           "reward_model.reward_manager": "batch"}
    got = refusals(old)
    assert any("custom_reward_function.path is ignored" in r and "reward.custom_reward_function.path" in r for r in got)
    assert any("reward_model.reward_manager is ignored" in r and "reward.reward_manager.name" in r for r in got)
    assert any(r.startswith("no reward.custom_reward_function.path") for r in got)
    # an older verl (no reward/ config group) reads exactly these keys: accepted there
    assert refusals(old, "0.4.1", new=False) == []
    assert refusals({**old, "custom_reward_function.name": "compute_score"}, "0.4.1", new=False)


def test_an_older_verls_prime_pool_in_process_is_pointed_at_the_service(monkeypatch):
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    settings = {"custom_reward_function.path": OURS, "custom_reward_function.name": "compute_score_float",
                "reward_model.reward_manager": "prime"}
    notes: list[str] = []
    assert verl_check.check(settings, "0.4.1", False, notes=notes)[0] == []
    assert len(notes) == 1 and "PROSFI_SERVE_URL" in notes[0]
    monkeypatch.setenv("PROSFI_SERVE_URL", "http://rm-node:8000")
    notes.clear()
    assert verl_check.check(settings, "0.4.1", False, notes=notes)[0] == [] and notes == []


@pytest.mark.parametrize("manager", ["batch", "prime", "nonsense"])
def test_managers_the_0_9_reward_loop_does_not_know_are_refused(manager):
    got = refusals({"reward.custom_reward_function.path": OURS, "reward.reward_manager.name": manager})
    assert len(got) == 1 and "Unknown reward manager" in got[0] and "use naive" in got[0]


@pytest.mark.parametrize("manager", list(verl_check.LOOP_MANAGERS))
def test_every_loop_manager_takes_the_per_sample_entries_not_the_batch_one(manager):
    base = {"reward.custom_reward_function.path": OURS, "reward.reward_manager.name": manager}
    assert refusals(base) == []
    assert refusals({**base, "reward.custom_reward_function.name": "compute_score_float"}) == []
    got = refusals({**base, "reward.custom_reward_function.name": "compute_score_batch"})
    assert len(got) == 1 and "use compute_score" in got[0]


def test_a_reward_function_that_is_not_prosfis_is_refused(tmp_path):
    other = tmp_path / "reward.py"
    other.write_text("def compute_score(**kw):\n    return 1.0\n")
    got = refusals({"reward.custom_reward_function.path": str(other)})
    assert len(got) == 1 and "is not prosfi's verl.py" in got[0]
    # prosfi's file as another install's path (the training nodes') is prosfi's
    assert refusals({"reward.custom_reward_function.path": "/opt/env/site-packages/prosfi/integrations/verl.py"}) == []


def _parquet(path, rows):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


def test_data_sources_verl_scores_itself_and_ground_truths_that_are_not_problems_are_refused(tmp_path):
    problem = logic_problems()[0]
    good = {"data_source": "prosfi", "prompt": [{"role": "user", "content": "q"}],
            "reward_model": {"style": "rule", "ground_truth": json.dumps(problem.to_dict())}}
    ok = _parquet(tmp_path / "ok.parquet", [good])
    gsm = _parquet(tmp_path / "gsm.parquet", [{**good, "data_source": "openai/gsm8k"}])
    aime = _parquet(tmp_path / "aime.parquet", [{**good, "data_source": "aime2024"}])
    bad_gt = _parquet(tmp_path / "gt.parquet", [{**good, "reward_model": {"style": "rule", "ground_truth": '{"x": 1}'}}])
    base = {"reward.custom_reward_function.path": OURS}
    assert refusals({**base, "data.train_files": ok, "data.val_files": [ok]}) == []
    for path, said in ((gsm, "'openai/gsm8k'"), (aime, "'aime2024'")):
        got = refusals({**base, "data.train_files": ok, "data.val_files": path})
        assert len(got) == 1 and said in got[0] and "verl's scorer" in got[0]
    got = refusals({**base, "data.train_files": bad_gt})
    assert len(got) == 1 and "not a prosfi problem" in got[0]


def test_cli_reads_config_name_and_overrides_one_line_per_refusal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(verl_check, "installed_verl", lambda: ("0.9.1", True))
    (tmp_path / "mine.yaml").write_text("\ufeffreward:\n  custom_reward_function:\n    path: null\n")
    args = ["--config-path", str(tmp_path), "--config-name", "mine"]
    assert verl_check.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("verl_check: refused: no reward.custom_reward_function.path")
    assert verl_check.main(args + [f"reward.custom_reward_function.path={OURS}"]) == 0
    assert "compute_score through the naive reward manager" in capsys.readouterr().out
    assert verl_check.main(args + [f"custom_reward_function.path={OURS}", "reward_model.reward_manager=prime"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 3


# --------------------------------------------------------------------------- verl's own code
def _compose(overrides):
    verl = pytest.importorskip("verl")
    hydra = pytest.importorskip("hydra")
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=os.path.join(os.path.dirname(verl.__file__), "trainer", "config"),
                               version_base=None):
        return compose("ppo_trainer", overrides=overrides), hydra


def _batch(tokenizer, texts, gts, data_source="prosfi"):
    import numpy as np
    import torch
    from verl import DataProto

    rows = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    width = max(map(len, rows))
    responses = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] + [1] * len(r) + [0] * (width - len(r)) for r in rows])  # a one-token prompt
    return DataProto.from_dict(
        tensors={"responses": responses, "attention_mask": mask},
        non_tensors={"data_source": np.array([data_source] * len(texts), dtype=object),
                     "reward_model": np.array([{"ground_truth": g, "style": "rule"} for g in gts], dtype=object),
                     "extra_info": np.array([{"index": i} for i in range(len(texts))], dtype=object)})


@pytest.fixture(scope="module")
def samples():
    problems = logic_problems()
    by_id = {p.id: p for p in problems}
    comps = [c for c in completions(problems) if isinstance(c.get("completion"), str) and c["problem_id"] in by_id]
    comps = comps[:8]
    return [by_id[c["problem_id"]] for c in comps], [c["completion"] for c in comps]


def _worker(config, tiny_model):
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    config.actor_rollout_ref.model.path = str(tiny_model)
    return RewardLoopWorker(config)


@pytest.mark.verl
def test_verl_0_9_reward_loop_calls_prosfi_with_the_documented_overrides(samples, tiny_model, monkeypatch):
    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    config, _ = _compose(docs_overrides())
    worker = _worker(config, tiny_model)
    problems, texts = samples
    data = _batch(worker.input_tokenizer, texts, [json.dumps(p.to_dict()) for p in problems])
    got = worker.loop.run_until_complete(worker.compute_score_batch(data))
    decoded = [worker.input_tokenizer.decode(worker.input_tokenizer(t, add_special_tokens=False)["input_ids"],
                                             skip_special_tokens=True) for t in texts]
    want = [r["reward"] for r in score_problems(problems, decoded)]
    assert [g["reward_score"] for g in got] == want and 1.0 in want and 0.0 in want
    assert set(got[0]["reward_extra_info"]) >= {"score", "chain_valid", "masked"}


@pytest.mark.verl
def test_verl_0_9_with_the_old_keys_never_calls_prosfi_and_verl_check_says_so(samples, tiny_model, monkeypatch):
    old = [f"custom_reward_function.path={OURS}", "custom_reward_function.name=compute_score"]
    config, _ = _compose(old)
    assert config.reward.custom_reward_function.path is None  # main_ppo does not move the old keys
    worker = _worker(config, tiny_model)
    problems, texts = samples
    with pytest.raises(NotImplementedError, match="data_source"):  # verl's default scorer ran, not prosfi
        worker.loop.run_until_complete(worker.compute_score_batch(_batch(worker.input_tokenizer, texts[:1], ["x"])))
    bad, _ = verl_check.check(verl_check.read_settings(old), *verl_check.installed_verl())
    assert any("custom_reward_function.path is ignored" in b for b in bad)
    config, _ = _compose(docs_overrides() + ["reward.custom_reward_function.name=compute_score_batch"])
    worker = _worker(config, tiny_model)
    with pytest.raises(TypeError, match="reward.custom_reward_function.name=compute_score"):
        worker.loop.run_until_complete(worker.compute_score_batch(
            _batch(worker.input_tokenizer, texts[:1], [json.dumps(problems[0].to_dict())])))
    for manager in ("batch", "prime"):
        config, _ = _compose(docs_overrides() + [f"reward.reward_manager.name={manager}"])
        with pytest.raises(ValueError, match="Unknown reward manager"):
            _worker(config, tiny_model)
        settings = verl_check.read_settings(docs_overrides() + [f"reward.reward_manager.name={manager}"])
        version, new = verl_check.installed_verl()
        assert new and verl_check.check(settings, version, new, verl_check.loop_managers(version))[0]


# --------------------------------------------------------------------------- ground truth as a parquet dict
@pytest.mark.parametrize("spec", ["kk:2..4", "fol:easy", "physics", "gsm_symbolic"])
def test_a_problem_dict_read_back_from_parquet_scores_as_its_json(spec, tmp_path, monkeypatch):
    """Arrow gives every row the union of the struct's keys (None where a row has none: one K&K problem's
    `assignment` gets the other problems' atoms); pandas (verl's main_eval) gives numpy arrays and scalars,
    `datasets` (verl's RLHFDataset) lists of dicts."""
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    import pyarrow.parquet as pq

    from prosfi.data.gold import gold_completion
    from prosfi.data.quant_gold import gold_completion as quantity_gold
    from prosfi.eval.sources import load_source
    from prosfi.integrations.verl import compute_score

    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    problems = load_source(spec, count=3).problems
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([{"data_source": "prosfi", "reward_model": {
        "style": "rule", "ground_truth": p.to_dict()}} for p in problems]), path)
    from_pandas = [r["ground_truth"] for r in pd.read_parquet(path)["reward_model"]]
    assert any(type(v).__module__ == "numpy" for v in from_pandas[0].values())
    readers = [from_pandas]
    if spec.startswith("kk"):
        assert any(v is None for v in from_pandas[0]["assignment"].values())  # the other problems' atoms
    datasets = pytest.importorskip("datasets")
    readers.append([r["reward_model"]["ground_truth"]
                    for r in datasets.load_dataset("parquet", data_files=str(path))["train"]])
    texts = []
    for p in problems:
        gold = (quantity_gold(p) if p.kind == "quantity" else gold_completion(p)) or ""
        texts.append([gold, gold.replace("<answer>", "<answer>not "), "no tags at all"])
    want = [[compute_score("prosfi", t, json.dumps(p.to_dict()))["score"] for t in ts]
            for p, ts in zip(problems, texts)]
    assert any(1.0 in w for w in want)
    for gts in readers:
        assert [[compute_score("prosfi", t, g)["score"] for t in ts] for g, ts in zip(gts, texts)] == want
    assert verl_check.data_problems([str(path)]) == []
