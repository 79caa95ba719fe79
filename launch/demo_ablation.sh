#!/usr/bin/env bash
# Usage: launch/demo_ablation.sh [--key value ...]     (extra keys go to every run)
#
# The paper's comparison at toy scale, on CPU: PRoSFI reward (recipes/demo/cpu_chains.yaml) vs outcome
# reward (recipes/demo/cpu_chains_outcome.yaml), per seed from ONE warm-up (the prosfi run's own SFT stage),
# with the same GRPO budget, evaluated on the same held-out problems (chains always checked). The prosfi
# run of a seed is the README's main job with `--seed S`; the outcome run starts from its warm-up
# (`--sft false --model_name_or_path <prosfi run>/sft`). Then `python -m prosfi.train.comparison` prints the
# table: accuracy and reward hit before -> after per reward, per seed and pooled, each change with its paired
# 95% interval, prosfi minus outcome after GRPO, and whether the expected shape shows (computed, never
# assumed): outcome keeps accuracy without raising reward hit, prosfi raises reward hit and keeps accuracy.
# Writes under $OUT (default runs/ablation):
#   prosfi-s<seed>/   the main job (sft/ is the shared warm-up; summary.json, eval_before/, eval_after/)
#   outcome-s<seed>/  the outcome-reward run from that warm-up
#   comparison.txt, comparison.json, comparison.png
# A finished run is resumed from its final checkpoint (nothing retrained). Exit 0 when the expected shape
# shows, 1 when it does not. Env: SEEDS (default "11 12 13"), OUT, RECIPE / OUTCOME_RECIPE (another pair of
# twins, e.g. recipes/demo/cpu_quant.yaml and recipes/demo/cpu_quant_outcome.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS="${SEEDS:-11 12 13}"
OUT="${OUT:-runs/ablation}"
PRO="${RECIPE:-recipes/demo/cpu_chains.yaml}"
OUTCOME="${OUTCOME_RECIPE:-recipes/demo/cpu_chains_outcome.yaml}"
mkdir -p "$OUT"

pro=(); outc=()
for seed in $SEEDS; do
  prosfi train "$PRO" --seed "$seed" --output_dir "$OUT/prosfi-s$seed" --run_name "ablation-prosfi-s$seed" "$@"
  prosfi train "$OUTCOME" --sft false --model_name_or_path "$OUT/prosfi-s$seed/sft" --seed "$seed" \
    --output_dir "$OUT/outcome-s$seed" --run_name "ablation-outcome-s$seed" "$@"
  pro+=("$OUT/prosfi-s$seed"); outc+=("$OUT/outcome-s$seed")
done
python -m prosfi.train.comparison --prosfi "${pro[@]}" --outcome "${outc[@]}" --out "$OUT"
