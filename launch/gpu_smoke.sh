#!/usr/bin/env bash
# Usage: launch/gpu_smoke.sh [--cpu] [WORK_DIR]
#
# A few-minute check of the GPU training path before a long run, with nothing but the project's own
# dependencies (torch, transformers, TRL, accelerate, DeepSpeed; no vLLM, no hub): a tiny local model
# (`prosfi model tiny`), an SFT warm-up of 2 steps, then 2 GRPO steps with HF generation and the prosfi
# reward (Z3), twice:
#   1. one process on CUDA in bf16;
#   2. the same under DeepSpeed ZeRO-2 (`accelerate launch --config_file recipes/accelerate_configs/zero2.yaml`,
#      one process), the warm-up then GRPO in one process as `prosfi train` runs them.
# It ends with one line: `gpu_smoke: PASS ...` or `gpu_smoke: FAIL ...` (exit status 0 or 1).
# Without a CUDA device (or with --cpu) it runs the same on the CPU in fp32, which checks the script itself.
# Logs and runs are kept in WORK_DIR (default: a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."

DEVICE=auto
if [[ "${1:-}" == "--cpu" ]]; then DEVICE=cpu; shift; fi
if [[ "${1:-}" == -* ]]; then awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 2; fi
WORK="${1:-$(mktemp -d -t prosfi-gpu-smoke-XXXXXX)}"
mkdir -p "$WORK"
if [[ "$DEVICE" == auto ]]; then
  DEVICE=$(python -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')
fi
if [[ "$DEVICE" == cuda ]]; then
  PRECISION=(--dtype bfloat16 --bf16 true --use_cpu false); MIXED=bf16; LABEL="cuda bf16"
else
  PRECISION=(--dtype float32 --bf16 false --use_cpu true); MIXED=no; LABEL="cpu fp32 (no GPU run)"
  export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fi
start=$(date +%s)

python -m prosfi.cli model tiny --out "$WORK/tiny" --vocab-size 1024 --hidden-size 64 --intermediate-size 128 \
  --num-hidden-layers 2 --corpus-problems 60 >"$WORK/tiny.log" 2>&1
cat >"$WORK/recipe.yaml" <<EOF
model_name_or_path: $WORK/tiny
dataset: kk
dataset_difficulty: "2"
dataset_size: 16
reward_mode: prosfi
verifier: {backends: [z3], workers: 1, timeout_ms: 2000}
sft: true
sft_size: 16
sft_max_steps: 2
sft_per_device_train_batch_size: 4
max_steps: 2
per_device_train_batch_size: 4
num_generations: 2
max_completion_length: 32
use_vllm: false
gradient_checkpointing: false
dataloader_num_workers: 0
learning_rate: 1.0e-4
logging_steps: 1
save_strategy: "no"
report_to: none
disable_tqdm: true
seed: 0
EOF

verdicts=()
failed=0
check() {  # NAME RC OUT_DIR LOG: a run passes when it exited 0 and logged 2 GRPO steps with a finite loss
  local verdict
  verdict=$(python - "$1" "$2" "$3" "$4" <<'EOF'
import json, math, sys
from pathlib import Path
name, rc, out, log = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()] if (out / "metrics.jsonl").is_file() else []
steps = [r for r in rows if "reward" in r]
ok = rc == 0 and [r["step"] for r in steps] == [1, 2] and all(math.isfinite(r.get("loss", float("nan"))) for r in steps) \
    and (out / "sft" / "prosfi_sft_done").is_file()
if ok:
    print(f"{name}: ok, 2 GRPO steps, reward {sum(r['reward'] for r in steps) / 2:.3f}")
else:
    print(f"{name}: FAILED, exit {rc}, {len(steps)} GRPO steps logged (see {log})")
EOF
)
  verdicts+=("$verdict")
  [[ "$verdict" != *FAILED* ]] || failed=1
}

set +e
python -m prosfi.train "$WORK/recipe.yaml" "${PRECISION[@]}" --output_dir "$WORK/plain" >"$WORK/plain.log" 2>&1
check "${LABEL% (*}" $? "$WORK/plain" "$WORK/plain.log"
accelerate launch --config_file recipes/accelerate_configs/zero2.yaml --num_processes 1 --mixed_precision "$MIXED" \
  --main_process_port "${SMOKE_PORT:-29517}" -m prosfi.train "$WORK/recipe.yaml" "${PRECISION[@]}" \
  --output_dir "$WORK/zero2" >"$WORK/zero2.log" 2>&1
check "deepspeed zero2 + warm-up" $? "$WORK/zero2" "$WORK/zero2.log"
set -e

summary="$(IFS=';'; echo "${verdicts[*]}" | sed 's/;/; /g')"
if (( failed )); then
  echo "gpu_smoke: FAIL [$LABEL] $summary ($(( $(date +%s) - start )) s, in $WORK)"; exit 1
fi
echo "gpu_smoke: PASS [$LABEL] $summary ($(( $(date +%s) - start )) s, in $WORK)"
