"""`prosfi model merge --adapter DIR -o OUT`: a LoRA adapter merged into its base model, saved whole.

GPU recipes train LoRA adapters (`use_peft: true`), so a run's output directory holds
`adapter_config.json` + `adapter_model.safetensors` on top of a base model (for a recipe with a
warm-up: `OUTPUT_DIR/sft`, itself already merged). vLLM (`prosfi eval --engine vllm`) and any plain
`from_pretrained` need one full model: this loads the base, applies the adapter, merges it
(`merge_and_unload`) and writes model, tokenizer (the adapter directory's, which carries the chat
template the run trained with) and generation config to OUT.
"""

from __future__ import annotations

import json
from pathlib import Path


class MergeError(ValueError):
    """A merge that cannot start (no adapter, no base, OUT not empty): says what to change."""


def adapter_base(adapter: Path, base: str | None = None) -> str:
    """The base model the adapter was trained on: `base`, else the adapter's `base_model_name_or_path`
    (a relative path is tried from the working directory, then next to the adapter directory)."""
    config_path = adapter / "adapter_config.json"
    if not config_path.is_file():
        if (adapter / "config.json").is_file():
            raise MergeError(f"--adapter {adapter}: a full model already (config.json, no adapter_config.json); "
                             "nothing to merge")
        raise MergeError(f"--adapter {adapter}: no adapter_config.json there (give a LoRA adapter directory)")
    if base:
        return base
    named = json.loads(config_path.read_text()).get("base_model_name_or_path")
    if not named:
        raise MergeError(f"--adapter {adapter}: adapter_config.json names no base model; pass --base MODEL")
    for candidate in (Path(named), adapter.parent / named, adapter / named):
        if candidate.is_dir():
            return str(candidate)
    if Path(named).is_absolute() or named.startswith((".", "/")) or named.count("/") > 1:
        raise MergeError(f"--adapter {adapter}: its base model {named!r} is not here; pass --base MODEL")
    return named  # a hub id


WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin")


def check_adapter_weights(adapter: Path) -> Path:
    """The adapter's weights file, refused (MergeError) when there is none or it holds no tensor: without it
    PEFT would look the directory's name up on the hub, or merge nothing and write the base model back as if
    it were the trained one (a run interrupted before `save_model`, a copy that left the weights behind)."""
    found = next((adapter / name for name in WEIGHT_FILES if (adapter / name).is_file()), None)
    if found is None:
        raise MergeError(f"--adapter {adapter}: adapter_config.json but no {' or '.join(WEIGHT_FILES)} (the adapter's "
                         "weights); give the folder the run saved them in")
    if found.suffix == ".safetensors":
        tensors = _safetensors_keys(found)
        if tensors is None:
            raise MergeError(f"--adapter {adapter}: {found.name} is not a readable safetensors file")
        if not tensors:
            raise MergeError(f"--adapter {adapter}: {found.name} holds no tensors (nothing to merge)")
    elif found.stat().st_size == 0:
        raise MergeError(f"--adapter {adapter}: {found.name} is empty (nothing to merge)")
    return found


def _safetensors_keys(path: Path) -> list[str] | None:
    """The tensor names in a safetensors header (8-byte little-endian length, then JSON), or None."""
    try:
        with path.open("rb") as f:
            size = int.from_bytes(f.read(8), "little")
            if not 0 < size <= 100_000_000:
                return None
            header = json.loads(f.read(size))
    except (OSError, ValueError):
        return None
    return [k for k in header if k != "__metadata__"] if isinstance(header, dict) else None


def merge_adapter(adapter: str | Path, out: str | Path, base: str | None = None, dtype: str = "auto") -> Path:
    """Merge `adapter` into its base and save the full model to `out` (which must not hold files yet)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    adapter, out = Path(adapter), Path(out)
    base_name = adapter_base(adapter, base)
    check_adapter_weights(adapter)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(f"-o {out}: exists and is not an empty folder (choose a new one; nothing is overwritten)")
    kwargs = {} if dtype == "auto" else {"dtype": getattr(torch, dtype)}
    model = AutoModelForCausalLM.from_pretrained(base_name, **({"dtype": "auto"} | kwargs))
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    tokenizer_from = adapter if (adapter / "tokenizer_config.json").is_file() else base_name
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_from))
    out.mkdir(parents=True, exist_ok=True)
    merged.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "prosfi_merge.json").write_text(json.dumps({"adapter": str(adapter), "base": base_name}, indent=2) + "\n")
    return out


__all__ = ["MergeError", "adapter_base", "check_adapter_weights", "merge_adapter"]
