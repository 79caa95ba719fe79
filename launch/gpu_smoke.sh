#!/usr/bin/env bash
# Usage: launch/gpu_smoke.sh [--cpu] [WORK_DIR]
#
# A few-minute check of the GPU training path before a long run, and of the claims about it that no CPU
# can show, with no hub and no network: a tiny local model (`prosfi model tiny`), then
#   1. full-parameter: SFT warm-up of 2 steps, then 2 GRPO steps with the prosfi reward (Z3), one process
#      on CUDA in bf16;
#   2. the same under DeepSpeed ZeRO-2 (`accelerate launch --config_file recipes/accelerate_configs/zero2.yaml`,
#      one process), when deepspeed is installed (else: skipped, said so);
#   3. LoRA: a LoRA warm-up (saved merged into the base), 2 GRPO steps training a LoRA adapter, then
#      `prosfi model merge` of that adapter into a full model;
#   4. generation from the merged model: `prosfi eval` on 4 K&K puzzles (vLLM when it is installed, else
#      transformers);
#   5. when vLLM is installed: 2 GRPO steps with vLLM rollouts (colocate) and TRL's importance-sampling
#      correction, passing only when `sampling/importance_sampling_ratio/mean` and
#      `sampling/sampling_logp_difference/mean` were logged and finite (TRL logs them for vLLM rollouts only:
#      without vLLM this step says skipped).
# First, in one line, what is missing (prosfi.train.gpu_check): a CUDA device, bf16, free GPU memory
# (MIN_FREE_GIB, default 8), the Python packages. WHEELS=DIR puts carried wheels on PYTHONPATH
# (launch/gpu_common.sh, docs/multi-gpu.md). It ends with one line: `gpu_smoke: PASS ...` or
# `gpu_smoke: FAIL ...` (exit 0 or 1). --cpu runs everything on the CPU in fp32 (no vLLM), which checks
# the script itself, not the GPU. Logs and runs are kept in WORK_DIR (default: a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
. launch/gpu_common.sh

DEVICE=cuda
if [[ "${1:-}" == "--cpu" ]]; then DEVICE=cpu; shift; fi
if [[ "${1:-}" == -* ]]; then awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 2; fi
use_wheels gpu_smoke
if [[ "$DEVICE" == cuda ]]; then
  preflight gpu_smoke --min-free-gib "${MIN_FREE_GIB:-8}"
else
  preflight gpu_smoke --cpu
fi
WORK="${1:-$(mktemp -d -t prosfi-gpu-smoke-XXXXXX)}"
mkdir -p "$WORK"
if [[ "$DEVICE" == cuda ]]; then
  PRECISION=(--dtype bfloat16 --bf16 true --use_cpu false); MIXED=bf16; LABEL="cuda bf16"
else
  PRECISION=(--dtype float32 --bf16 false --use_cpu true); MIXED=no; LABEL="cpu fp32 (no GPU run)"
  export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fi
VLLM=""; [[ "$DEVICE" == cuda ]] && has_module vllm && VLLM=1
start=$(date +%s)

"$PY" -m prosfi.cli model tiny --out "$WORK/tiny" --vocab-size 1024 --hidden-size 64 --intermediate-size 128 \
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
# the tiny model's projections; r 4 (a LoRA warm-up at the GPU recipes' rate)
LORA=(--use_peft true --lora_r 4 --lora_alpha 8 --lora_target_modules q_proj v_proj --sft_learning_rate 1e-4)
# vLLM colocated with the trainer on the one GPU, with the GPU recipes' importance-sampling settings
VLLM_KEYS=(--use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization 0.2 --vllm_enable_sleep_mode false
  --vllm_importance_sampling_correction true --vllm_importance_sampling_mode token_truncate
  --vllm_importance_sampling_clip_min 0.5 --vllm_importance_sampling_clip_max 2.0 --top_p 1.0 --sft false)

verdicts=()
failed=0
check() {  # NAME RC OUT_DIR LOG [WARM_UP(1|0) [IS(1|0)]]: exit 0 and 2 GRPO steps with a finite loss logged
  local verdict
  verdict=$("$PY" - "$@" <<'EOF'
import json, math, sys
from pathlib import Path
name, rc, out, log = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
warm_up = (sys.argv[5] if len(sys.argv) > 5 else "1") == "1"
want_is = (sys.argv[6] if len(sys.argv) > 6 else "0") == "1"
rows = [json.loads(l) for l in (out / "metrics.jsonl").read_text().splitlines()] if (out / "metrics.jsonl").is_file() else []
steps = [r for r in rows if "reward" in r]
ok = rc == 0 and [r["step"] for r in steps] == [1, 2] and all(math.isfinite(r.get("loss", float("nan"))) for r in steps) \
    and (not warm_up or (out / "sft" / "prosfi_sft_done").is_file())
keys = ("sampling/importance_sampling_ratio/mean", "sampling/sampling_logp_difference/mean")
logged = [r for r in steps if all(isinstance(r.get(k), (int, float)) and math.isfinite(r[k]) for k in keys)]
if ok and want_is and not logged:
    print(f"{name}: FAILED, no finite {' / '.join(keys)} in the GRPO rows (see {log})")
elif ok:
    extra = ""
    if want_is:
        extra = f", is-ratio {logged[-1][keys[0]]:.3f}, logp-gap {logged[-1][keys[1]]:.4f}"
    print(f"{name}: ok, 2 GRPO steps, reward {sum(r['reward'] for r in steps) / 2:.3f}{extra}")
else:
    print(f"{name}: FAILED, exit {rc}, {len(steps)} GRPO steps logged (see {log})")
EOF
)
  verdicts+=("$verdict")
  [[ "$verdict" != *FAILED* ]] || failed=1
}
note() { verdicts+=("$1"); }

set +e
# 1. full parameters, one process
"$PY" -m prosfi.train "$WORK/recipe.yaml" "${PRECISION[@]}" --output_dir "$WORK/plain" >"$WORK/plain.log" 2>&1
check "${LABEL% (*}" $? "$WORK/plain" "$WORK/plain.log"

# 2. DeepSpeed ZeRO-2
if has_module deepspeed; then
  "$PY" -m accelerate.commands.launch --config_file recipes/accelerate_configs/zero2.yaml --num_processes 1 \
    --mixed_precision "$MIXED" --main_process_port "${SMOKE_PORT:-29517}" -m prosfi.train "$WORK/recipe.yaml" \
    "${PRECISION[@]}" --output_dir "$WORK/zero2" >"$WORK/zero2.log" 2>&1
  check "deepspeed zero2 + warm-up" $? "$WORK/zero2" "$WORK/zero2.log"
else
  note "deepspeed zero2: skipped (deepspeed not installed)"
fi

# 3. LoRA warm-up and GRPO adapter, merged
"$PY" -m prosfi.train "$WORK/recipe.yaml" "${PRECISION[@]}" "${LORA[@]}" --output_dir "$WORK/lora" >"$WORK/lora.log" 2>&1
check "lora warm-up + grpo" $? "$WORK/lora" "$WORK/lora.log"
rm -rf "$WORK/merged"
"$PY" -m prosfi.cli model merge --adapter "$WORK/lora" -o "$WORK/merged" >"$WORK/merge.log" 2>&1
merge_rc=$?
if [[ $merge_rc == 0 && -f "$WORK/merged/config.json" && ! -f "$WORK/merged/adapter_config.json" \
      && -f "$WORK/lora/adapter_config.json" ]]; then
  note "lora merge: ok, a full model"
else
  note "lora merge: FAILED, exit $merge_rc (see $WORK/merge.log)"; failed=1
fi

# 4. generation from the merged model
ENGINE=(--engine transformers); [[ -n "$VLLM" ]] && ENGINE=(--engine vllm)
"$PY" -m prosfi.cli eval --model "$WORK/merged" "${ENGINE[@]}" --data kk:2 --count 4 --max-new-tokens 32 \
  --no-progress -o "$WORK/eval_merged" --overwrite >"$WORK/eval_merged.log" 2>&1
eval_rc=$?
generated=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_completions"])' \
  "$WORK/eval_merged/summary.json" 2>/dev/null || echo 0)
if [[ $eval_rc == 0 && "$generated" -gt 0 ]]; then
  note "merged model generates: ok, $generated completions (${ENGINE[1]})"
else
  note "merged model generates: FAILED, exit $eval_rc (see $WORK/eval_merged.log)"; failed=1
fi

# 5. vLLM rollouts: the importance-sampling values TRL logs
if [[ -n "$VLLM" ]]; then
  "$PY" -m prosfi.train "$WORK/recipe.yaml" "${PRECISION[@]}" "${VLLM_KEYS[@]}" --model_name_or_path "$WORK/merged" \
    --output_dir "$WORK/vllm" >"$WORK/vllm.log" 2>&1
  check "vllm rollouts + IS values logged" $? "$WORK/vllm" "$WORK/vllm.log" 0 1
else
  note "vllm IS values: skipped (vLLM not installed: TRL logs them for vLLM rollouts only, HF generation ran)"
fi
set -e

summary="$(IFS=';'; echo "${verdicts[*]}" | sed 's/;/; /g')"
if (( failed )); then
  echo "gpu_smoke: FAIL [$LABEL] $summary ($(( $(date +%s) - start )) s, in $WORK)"; exit 1
fi
echo "gpu_smoke: PASS [$LABEL] $summary ($(( $(date +%s) - start )) s, in $WORK)"
