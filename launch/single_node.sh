#!/usr/bin/env bash
# Usage: launch/single_node.sh RECIPE.yaml [--key value ...]
#
# One node: a vLLM server (`vllm serve`, with the settings TRL's server mode needs) on some GPUs, GRPO
# training (`accelerate launch`) on the others, weights pushed to the server after every step. Default for
# 8 GPUs: server on GPUs 0-3 (tensor parallel 4), 4 trainer processes on GPUs 4-7 with DeepSpeed ZeRO-2:
#   launch/single_node.sh recipes/qwen2.5-7b-instruct/grpo/prosfi_proverqa.yaml
#   launch/single_node.sh recipes/qwen2.5-7b-instruct/grpo/prosfi_proverqa.yaml --learning_rate 2e-6 --beta 0.01
# Env (defaults in brackets):
#   VLLM_GPUS [0,1,2,3]   TRAIN_GPUS [4,5,6,7]   VLLM_PORT [8000]
#   VLLM_TP [4, or fewer when VLLM_GPUS has fewer]: must divide the model's attention and KV heads
#     (Qwen2.5-7B: 28 and 4, so 1, 2 or 4)   VLLM_DP [1]: keep 1 for dense models (TRL: data parallel > 1
#     errors out for them, vLLM PR #30739)
#   ACCELERATE_CONFIG [recipes/accelerate_configs/zero2.yaml]   VLLM_ARGS [extra `vllm serve` flags]
#   MODEL [the recipe's model_name_or_path, command-line override included]   HEALTH_TIMEOUT_S [1800]  HEALTH_POLL_S [5]
#   LOG_DIR [runs/logs]   VLLM_HOST_IP [this node's address, `python -m prosfi.train.host_ip`]: the address TRL's
#     client tells the server to reach the trainers' weight-sync group at (vLLM's guess is 0.0.0.0 on a node
#     without a default route)
# vLLM colocate mode needs no server: `accelerate launch --config_file ... -m prosfi.train RECIPE
#   --vllm_mode colocate` on all GPUs (see docs/multi-gpu.md).
# The server: `trl vllm-serve` is deprecated in TRL 1.16 (it only execs vLLM's server, with a warning); this
# runs what it runs: `VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend": "nccl"}'
# --logprobs-mode processed_logprobs --max-logprobs -1` (dev mode and the NCCL weight-transfer engine for the
# trainers' weight pushes, log-probs after temperature for the importance-sampling correction).
# Stages: with `sft: true` the warm-up runs first as its own `accelerate launch` (`prosfi sft`, while the
# server loads); the GRPO launch then finds OUTPUT_DIR/sft and starts from it. The server starts from the
# base model; TRL pushes the trainer's weights to it before the first rollout, so rollouts use them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || "$1" == -* ]]; then awk 'NR > 1 && /^#/ && !/^#SBATCH/ {print; next} NR > 1 {exit}' "$0"; exit 2; fi
RECIPE="$1"; shift
VLLM_GPUS="${VLLM_GPUS:-0,1,2,3}"
TRAIN_GPUS="${TRAIN_GPUS:-4,5,6,7}"
NUM_VLLM="$(tr ',' '\n' <<<"$VLLM_GPUS" | wc -l)"
VLLM_TP="${VLLM_TP:-$(( NUM_VLLM < 4 ? NUM_VLLM : 4 ))}"
if (( NUM_VLLM % VLLM_TP )); then echo "VLLM_TP=$VLLM_TP does not divide the $NUM_VLLM VLLM_GPUS" >&2; exit 2; fi
VLLM_DP="${VLLM_DP:-1}"
if (( VLLM_TP * VLLM_DP < NUM_VLLM )); then
  echo "note: the server uses $(( VLLM_TP * VLLM_DP )) of the $NUM_VLLM VLLM_GPUS (tensor parallel $VLLM_TP x data parallel $VLLM_DP)" >&2
fi
VLLM_PORT="${VLLM_PORT:-8000}"
ACCELERATE_CONFIG="${ACCELERATE_CONFIG:-recipes/accelerate_configs/zero2.yaml}"
HEALTH_TIMEOUT_S="${HEALTH_TIMEOUT_S:-1800}"
HEALTH_POLL_S="${HEALTH_POLL_S:-5}"
NUM_TRAIN="$(tr ',' '\n' <<<"$TRAIN_GPUS" | wc -l)"
LOG_DIR="${LOG_DIR:-runs/logs}"
mkdir -p "$LOG_DIR"

# the recipe as the trainers will see it (overrides included): model, stages, batch
PLAN="$(python -m prosfi.train.launch_env "$RECIPE" --num_processes "$NUM_TRAIN" "$@")"
eval "$PLAN"
MODEL="${MODEL:-$PROSFI_MODEL}"
echo "GRPO batch: $PROSFI_BATCH"
VLLM_HOST_IP="${VLLM_HOST_IP:-$(python -m prosfi.train.host_ip 2>/dev/null || echo 127.0.0.1)}"  # server and trainers: this node
export VLLM_HOST_IP
echo "VLLM_HOST_IP=$VLLM_HOST_IP"

set -x
CUDA_VISIBLE_DEVICES="$VLLM_GPUS" VLLM_SERVER_DEV_MODE=1 vllm serve "$MODEL" \
  ${PROSFI_MODEL_REVISION:+--revision "$PROSFI_MODEL_REVISION"} --host 0.0.0.0 --port "$VLLM_PORT" \
  --tensor-parallel-size "$VLLM_TP" --data-parallel-size "$VLLM_DP" \
  --weight-transfer-config '{"backend": "nccl"}' --logprobs-mode processed_logprobs --max-logprobs -1 \
  ${VLLM_ARGS:-} >"$LOG_DIR/vllm-$VLLM_PORT.log" 2>&1 &
VLLM_PID=$!
set +x
trap 'kill "$VLLM_PID" 2>/dev/null || true' EXIT

if [[ -n "$PROSFI_SFT" ]]; then
  set -x
  CUDA_VISIBLE_DEVICES="$TRAIN_GPUS" accelerate launch --config_file "$ACCELERATE_CONFIG" \
    --num_processes "$NUM_TRAIN" -m prosfi.cli sft "$RECIPE" --num_processes "$NUM_TRAIN" "$@"
  set +x
fi

echo "waiting for the vLLM server: http://localhost:$VLLM_PORT/health (log: $LOG_DIR/vllm-$VLLM_PORT.log)"
deadline=$(( $(date +%s) + HEALTH_TIMEOUT_S ))
until curl -sfL "http://localhost:$VLLM_PORT/health" >/dev/null; do
  if ! kill -0 "$VLLM_PID" 2>/dev/null; then echo "vLLM server exited; see $LOG_DIR/vllm-$VLLM_PORT.log" >&2; exit 1; fi
  if (( $(date +%s) > deadline )); then echo "vLLM server not healthy after ${HEALTH_TIMEOUT_S}s" >&2; exit 1; fi
  sleep "$HEALTH_POLL_S"
done

set -x
CUDA_VISIBLE_DEVICES="$TRAIN_GPUS" accelerate launch --config_file "$ACCELERATE_CONFIG" \
  --num_processes "$NUM_TRAIN" -m prosfi.train "$RECIPE" --num_processes "$NUM_TRAIN" \
  --use_vllm true --vllm_mode server --vllm_server_host localhost --vllm_server_port "$VLLM_PORT" "$@"
