#!/usr/bin/env bash
# Usage: launch/demo_seeds.sh [--key value ...]     (extra keys go to every run)
#
# The CPU demo's claim on three seeds: `prosfi train recipes/demo/cpu_chains.yaml --seed S` for each seed
# (warm-up, held-out evaluation before and after GRPO), then one table: per seed and pooled over the seeds
# (paired, 200 held-out problems x 3 seeds = 600 problem-runs), reward hit and accuracy before -> after
# with the change and its 95% interval, and the verdict against "soundness up, accuracy kept" (accuracy
# kept = the interval's lower bound not below -2 points). Exit 0 when the claim holds pooled and reward
# hit rose by >= 0.10 on every seed.
# Writes under $OUT (default runs/demo_seeds): s<seed>/ (each run), verdict.txt, verdict.json.
# A seed whose run finished is resumed from its final checkpoint (nothing retrained: only its held-out
# evaluation after GRPO runs again). Env: SEEDS (default "11 12 13"), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS="${SEEDS:-11 12 13}"
OUT="${OUT:-runs/demo_seeds}"
mkdir -p "$OUT"
dirs=()
for seed in $SEEDS; do
  prosfi train recipes/demo/cpu_chains.yaml --seed "$seed" --output_dir "$OUT/s$seed" --run_name "demo-s$seed" "$@"
  dirs+=("$OUT/s$seed")
done
set +e
python -m prosfi.train.verdict "${dirs[@]}" --json "$OUT/verdict.json" | tee "$OUT/verdict.txt"
status=${PIPESTATUS[0]}
echo "wrote $OUT/verdict.txt and $OUT/verdict.json"
exit "$status"
