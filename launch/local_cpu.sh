#!/usr/bin/env bash
# Usage: launch/local_cpu.sh RECIPE.yaml [--key value ...]
#
# Train on this machine's CPUs, one process:
#   launch/local_cpu.sh recipes/demo/cpu_chains.yaml       # the CPU demo
#   launch/local_cpu.sh recipes/demo/cpu_kk.yaml --max_steps 40 --learning_rate 5e-5   # K&K plumbing check
# Env: NPROC (default 1) > 1 runs that many CPU processes with torchrun (gloo backend); each
#      gets its own verifier pool, so keep `verifier.workers` small.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -eq 0 || "$1" == -* ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2   # the usage above
  exit 2
fi
RECIPE="$1"; shift
NPROC="${NPROC:-1}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( $(nproc) / NPROC > 0 ? $(nproc) / NPROC : 1 ))}"
export CUDA_VISIBLE_DEVICES=""

set -x
if [[ "$NPROC" -gt 1 ]]; then
  torchrun --standalone --nproc_per_node "$NPROC" -m prosfi.train "$RECIPE" --use_cpu true "$@"
else
  prosfi train "$RECIPE" "$@"
fi
