#!/usr/bin/env bash
# Usage: launch/single_node.sh RECIPE.yaml [--key value ...]
#
# One node: a vLLM server (`trl vllm-serve`) on some GPUs, GRPO training (`accelerate launch`) on the
# others, weights pushed to the server after every step. Default for 8 GPUs: server on GPUs 0-3
# (tensor parallel 4), 4 trainer processes on GPUs 4-7 with DeepSpeed ZeRO-2:
#   launch/single_node.sh recipes/qwen2.5-7b-instruct/grpo/prosfi_proverqa.yaml
#   launch/single_node.sh recipes/qwen2.5-7b-instruct/grpo/prosfi_proverqa.yaml --learning_rate 2e-6 --beta 0.01
# Env (defaults in brackets):
#   VLLM_GPUS [0,1,2,3]   TRAIN_GPUS [4,5,6,7]   VLLM_TP [number of VLLM_GPUS]   VLLM_PORT [8000]
#   ACCELERATE_CONFIG [recipes/accelerate_configs/zero2.yaml]   VLLM_ARGS [extra `trl vllm-serve` flags]
#   MODEL [the recipe's model_name_or_path]   HEALTH_TIMEOUT_S [1800]
# vLLM colocate mode needs no server: `accelerate launch --config_file ... -m prosfi.train RECIPE
#   --vllm_mode colocate` on all GPUs (see the README).
# The server starts from the recipe's base model; with `sft: true` the trainers run the warm-up first, and
# TRL pushes the trainer's weights to the server before the first generation, so rollouts use them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || "$1" == -* ]]; then awk 'NR > 1 && /^#/ && !/^#SBATCH/ {print; next} NR > 1 {exit}' "$0"; exit 2; fi
RECIPE="$1"; shift
VLLM_GPUS="${VLLM_GPUS:-0,1,2,3}"
TRAIN_GPUS="${TRAIN_GPUS:-4,5,6,7}"
VLLM_TP="${VLLM_TP:-$(tr ',' '\n' <<<"$VLLM_GPUS" | wc -l)}"
VLLM_PORT="${VLLM_PORT:-8000}"
ACCELERATE_CONFIG="${ACCELERATE_CONFIG:-recipes/accelerate_configs/zero2.yaml}"
HEALTH_TIMEOUT_S="${HEALTH_TIMEOUT_S:-1800}"
NUM_TRAIN="$(tr ',' '\n' <<<"$TRAIN_GPUS" | wc -l)"
MODEL="${MODEL:-$(python -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["model_name_or_path"])' "$RECIPE")}"
LOG_DIR="${LOG_DIR:-runs/logs}"
mkdir -p "$LOG_DIR"

set -x
CUDA_VISIBLE_DEVICES="$VLLM_GPUS" trl vllm-serve --model "$MODEL" --tensor_parallel_size "$VLLM_TP" \
  --port "$VLLM_PORT" ${VLLM_ARGS:-} >"$LOG_DIR/vllm-$VLLM_PORT.log" 2>&1 &
VLLM_PID=$!
set +x
trap 'kill "$VLLM_PID" 2>/dev/null || true' EXIT

echo "waiting for the vLLM server: http://localhost:$VLLM_PORT/health/ (log: $LOG_DIR/vllm-$VLLM_PORT.log)"
deadline=$(( $(date +%s) + HEALTH_TIMEOUT_S ))
until curl -sfL "http://localhost:$VLLM_PORT/health/" >/dev/null; do
  if ! kill -0 "$VLLM_PID" 2>/dev/null; then echo "vLLM server exited; see $LOG_DIR/vllm-$VLLM_PORT.log" >&2; exit 1; fi
  if (( $(date +%s) > deadline )); then echo "vLLM server not healthy after ${HEALTH_TIMEOUT_S}s" >&2; exit 1; fi
  sleep 5
done

set -x
CUDA_VISIBLE_DEVICES="$TRAIN_GPUS" accelerate launch --config_file "$ACCELERATE_CONFIG" \
  --num_processes "$NUM_TRAIN" -m prosfi.train "$RECIPE" \
  --use_vllm true --vllm_mode server --vllm_server_host localhost --vllm_server_port "$VLLM_PORT" "$@"
