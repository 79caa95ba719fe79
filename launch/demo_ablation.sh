#!/usr/bin/env bash
# Usage: launch/demo_ablation.sh [--key value ...]     (extra keys go to every GRPO run)
#
# The paper's comparison at toy scale, on CPU: PRoSFI reward (recipes/demo/cpu_chains.yaml) vs outcome
# reward (recipes/demo/cpu_chains_outcome.yaml), both starting from ONE shared SFT warm-up, with the
# same seeds, evaluated on the same held-out problems (eval_held_out; chains always checked).
# Writes under $OUT (default runs/ablation):
#   warmup/sft                    the shared warm-up model
#   <mode>-s<seed>/               each GRPO run (summary.json with eval_before/eval_after, reward_curve.png)
#   compare/                      prosfi eval compare: warm-up vs every run (compare.md, compare.json, plots)
#   compare-s<seed>/              outcome (baseline) vs prosfi for one seed: the paired difference
#   ablation.md                   all compare tables, one file
# Env: SEEDS (default "0": one pair of GRPO runs; on 2 cores each takes minutes), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS="${SEEDS:-0}"
OUT="${OUT:-runs/ablation}"
PRO="recipes/demo/cpu_chains.yaml"
OUTCOME="recipes/demo/cpu_chains_outcome.yaml"
mkdir -p "$OUT"

set -x
prosfi sft "$PRO" --output_dir "$OUT/warmup" --run_name ablation-warmup
dirs=()
for seed in $SEEDS; do
  for mode in prosfi outcome; do
    recipe="$PRO"; [[ "$mode" == outcome ]] && recipe="$OUTCOME"
    prosfi train "$recipe" --sft false --model_name_or_path "$OUT/warmup/sft" --seed "$seed" \
      --output_dir "$OUT/$mode-s$seed" --run_name "ablation-$mode-s$seed" "$@"
  done
  prosfi eval compare "$OUT/outcome-s$seed/eval_after" "$OUT/prosfi-s$seed/eval_after" -o "$OUT/compare-s$seed" --overwrite
  dirs+=("$OUT/outcome-s$seed/eval_after" "$OUT/prosfi-s$seed/eval_after")
done
first=$(echo $SEEDS | cut -d' ' -f1)
prosfi eval compare "$OUT/prosfi-s$first/eval_before" "${dirs[@]}" -o "$OUT/compare" --overwrite
set +x
{
  echo "# Toy ablation: prosfi vs outcome reward (seeds: $SEEDS)"
  echo
  echo "## Warm-up vs every run"
  tail -n +2 "$OUT/compare/compare.md"
  for seed in $SEEDS; do
    echo
    echo "## Seed $seed: outcome (baseline) vs prosfi"
    tail -n +2 "$OUT/compare-s$seed/compare.md"
  done
} > "$OUT/ablation.md"
echo "wrote $OUT/ablation.md and plots in $OUT/compare"
