"""The SFT warm-up and GRPO as two stages of one process under DeepSpeed (CPU, one rank): each stage its
own Accelerator and DeepSpeed engine, a LoRA warm-up under ZeRO-3 merged from gathered parameters, and
one wandb run per stage.

Each run is a subprocess: the launch variables (RANK, WORLD_SIZE, ACCELERATE_USE_DEEPSPEED, ...) and the
process group must not leak into the test process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("deepspeed")

from launch_support import failure, run_launch
from test_train_run import _recipe as tiny_recipe  # noqa: E402 - after the skips

ONE_RANK_TIMEOUT = 180  # seconds; alone each run takes 15-20 s on 2 cores, under the whole suite up to ~4x that
TWO_RANKS_TIMEOUT = 240


def _recipe(tmp_path: Path, model: Path, **extra) -> str:
    """test_train_run's tiny K&K recipe with a 2-step SFT warm-up before GRPO."""
    warm_up = {"save_steps": 2, "sft": True, "sft_size": 8, "sft_max_steps": 2,
               "sft_per_device_train_batch_size": 4, "sft_learning_rate": 1e-2}
    return tiny_recipe(tmp_path, model, **{**warm_up, **extra})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_deepspeed(recipe: str, zero_stage: int, *overrides: str, env: dict | None = None):
    """`prosfi train` as one DeepSpeed rank, the way `accelerate launch` would start it."""
    launch = {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "RANK": "0", "LOCAL_RANK": "0",
        "WORLD_SIZE": "1", "ACCELERATE_USE_DEEPSPEED": "true",
        "ACCELERATE_DEEPSPEED_ZERO_STAGE": str(zero_stage), "ACCELERATE_MIXED_PRECISION": "no",
        "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1",
    }
    cmd = [sys.executable, "-m", "prosfi.train", recipe, *overrides]
    proc = run_launch(cmd, {**os.environ, **launch, **(env or {})}, ONE_RANK_TIMEOUT,
                      what=f"one ZeRO-{zero_stage} rank")
    assert proc.returncode == 0, failure(proc)
    return proc


def _stale_build_lock(tmp_path: Path) -> dict[str, str]:
    """A TORCH_EXTENSIONS_DIR holding the lock a build killed mid-way leaves behind for DeepSpeed's CPU
    shared-memory op: before issue #36 every DeepSpeed process on the CPU waited for it, forever and idle."""
    from torch.utils import cpp_extension

    from prosfi.train.deepspeed_cpu import SHM_OP

    root = tmp_path / "torch_extensions"
    saved = os.environ.get("TORCH_EXTENSIONS_DIR")
    os.environ["TORCH_EXTENSIONS_DIR"] = str(root)
    try:
        build = Path(cpp_extension._get_build_directory(SHM_OP, verbose=False))
    finally:
        if saved is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR")
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = saved
    (build / "lock").touch()
    return {"TORCH_EXTENSIONS_DIR": str(root)}


def test_zero2_warm_up_then_grpo_one_wandb_run_per_stage(tiny_model, tmp_path):
    pytest.importorskip("wandb")
    out = tmp_path / "out"
    wandb_root = tmp_path / "wandb_root"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), run_name="ds2", report_to=["wandb"])
    # with a stale build lock: prosfi does not build (nor lock) DeepSpeed's CPU shared-memory op at all
    _run_deepspeed(recipe, 2, env={"WANDB_MODE": "offline", "WANDB_DIR": str(wandb_root), "WANDB_SILENT": "true",
                                   **_stale_build_lock(tmp_path)})
    assert (out / "sft" / "prosfi_sft_done").is_file() and (out / "model.safetensors").is_file()
    assert (out / "checkpoint-2" / "global_step2").is_dir()  # GRPO ran under DeepSpeed (its checkpoint layout)
    runs = sorted((wandb_root / "wandb").glob("offline-run-*"))
    assert len(runs) == 2  # the warm-up's run was finished, GRPO started its own
    logs = [b"".join(p.read_bytes() for p in run.glob("*.wandb")) for run in runs]
    sft_log, grpo_log = sorted(logs, key=lambda b: b"ds2-grpo" in b)
    assert b"ds2-sft" in sft_log and b"ds2-grpo" not in sft_log
    assert b"ds2-grpo" in grpo_log and b"prosfi/chain_valid_rate" in grpo_log
    assert b"prosfi/chain_valid_rate" not in sft_log  # GRPO's rows did not go to the warm-up's run


def _releasing_zero3(tmp_path: Path, save_16bit: bool = False) -> str:
    """A ZeRO-3 config that releases every gathered parameter after use, as DeepSpeed does for a 7B model (a
    tiny one stays under its live-parameter and reuse limits, so its weights would stay gathered and a save
    that forgot to gather would still look right)."""
    import json

    path = tmp_path / "zero3_releasing.json"
    path.write_text(json.dumps({
        "zero_optimization": {"stage": 3, "stage3_max_live_parameters": 0, "stage3_max_reuse_distance": 0,
                              "stage3_param_persistence_threshold": 0, "stage3_prefetch_bucket_size": 0,
                              "stage3_gather_16bit_weights_on_model_save": save_16bit},
        "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "train_batch_size": "auto", "gradient_clipping": "auto", "zero_allow_untested_optimizer": True}))
    return str(path)


def test_zero3_lora_warm_up_is_merged_from_gathered_parameters(tiny_model, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), max_steps=1, save_strategy="no", use_peft=True,
                     lora_r=4, lora_alpha=8, lora_target_modules=["q_proj", "v_proj"])
    _run_deepspeed(recipe, 3, env={"ACCELERATE_DEEPSPEED_CONFIG_FILE": _releasing_zero3(tmp_path)})
    base = dict(AutoModelForCausalLM.from_pretrained(tiny_model).named_parameters())
    merged = dict(AutoModelForCausalLM.from_pretrained(out / "sft").named_parameters())
    assert merged.keys() == base.keys()  # a plain model: no LoRA layers left
    for name, tensor in merged.items():
        assert tensor.shape == base[name].shape, name  # full tensors, not ZeRO-3 shards of shape [0]
    assert torch.equal(merged["model.embed_tokens.weight"], base["model.embed_tokens.weight"])  # frozen
    q = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(merged[q], base[q])  # the trained adapter was merged in
    k = "model.layers.0.self_attn.k_proj.weight"
    assert torch.equal(merged[k], base[k])  # no adapter there
    assert (out / "adapter_config.json").is_file()  # GRPO trained its own adapter on the merged model


def test_the_warm_up_model_and_accelerator_state_are_released_before_grpo(tiny_model, tmp_path):
    import gc
    import weakref

    from accelerate.state import AcceleratorState
    from transformers import TrainerCallback

    from prosfi.train.recipe import resolve
    from prosfi.train.sft import run_sft

    class Watch(TrainerCallback):
        model = None

        def on_train_end(self, args, state, control, model=None, **kwargs):
            Watch.model = weakref.ref(model)

    r = resolve(_recipe(tmp_path, tiny_model, output_dir=str(tmp_path / "out"), sft_max_steps=1), [])
    gc.disable()  # the trainer's reference cycles must not wait for the collector's next pass
    try:
        path = run_sft(r.script, r.training, r.model, r.model.model_name_or_path, callbacks=[Watch()])
        assert Watch.model is not None and Watch.model() is None  # nothing holds the warm-up model any more
    finally:
        gc.enable()
    assert Path(path, "prosfi_sft_done").is_file()
    assert AcceleratorState._shared_state == {}  # GRPO's trainer may bring its own DeepSpeed plugin


def _run_two_ranks(recipe: str, env: dict, timeout: int = TWO_RANKS_TIMEOUT) -> subprocess.CompletedProcess:
    """`prosfi train` as two CPU processes (torchrun); a hang is killed with its whole process group, and the
    failure shows where every process stood (launch_support)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "prosfi.train", recipe]
    return run_launch(cmd, {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", **env}, timeout,
                      what="two ZeRO-3 ranks (torchrun)")


ZERO3 = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3",
         "ACCELERATE_DEEPSPEED_ZERO3_INIT": "true", "ACCELERATE_DEEPSPEED_ZERO3_SAVE_16BIT_MODEL": "true",
         "ACCELERATE_MIXED_PRECISION": "no"}  # recipes/accelerate_configs/zero3.yaml, on CPU


@pytest.mark.slow
@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "lockstep"])
def test_zero3_two_processes_held_out_evaluation_runs_on_every_rank(gather, tiny_model, tmp_path):
    # issue #21 item 9: the held-out evaluation after GRPO generated on the main process only, so under
    # ZeRO-3 the other rank waited at a barrier while rank 0 needed it to gather weights (a hang); the
    # one before GRPO loaded the model inside zero.Init on rank 0 alone (a hang too)
    import json

    out = tmp_path / "out"
    recipe = tiny_recipe(tmp_path, tiny_model, output_dir=str(out), max_steps=1, save_strategy="no",
                         max_completion_length=16, eval_held_out=3, eval_batch_size=2, sft_size=8,
                         ds3_gather_for_generation=gather)  # False: shards gathered per forward, in lockstep
    # parameters released after each use (generation needs both ranks for every forward)
    proc = _run_two_ranks(recipe, {**ZERO3, "ACCELERATE_DEEPSPEED_CONFIG_FILE": _releasing_zero3(tmp_path, True)})
    assert proc.returncode == 0, failure(proc)
    summary = json.loads((out / "summary.json").read_text())
    for stage in ("eval_before", "eval_after"):
        records = [json.loads(line) for line in (out / stage / "completions.jsonl").read_text().splitlines()]
        assert len(records) == 3 and len({r["problem_id"] for r in records}) == 3  # both ranks' shares
        assert summary[stage]["n_problems"] == 3
    # the 16-bit save gathered the shards: full tensors
    from transformers import AutoModelForCausalLM

    base = dict(AutoModelForCausalLM.from_pretrained(tiny_model).named_parameters())
    saved = dict(AutoModelForCausalLM.from_pretrained(out).named_parameters())
    assert {k: v.shape for k, v in saved.items()} == {k: v.shape for k, v in base.items()}
