#!/usr/bin/env bash
# Issue 60 item 4: the multi-language CPU training run, in the background, resumable.
#
#   STORE=$PWD/.gpu nohup scripts/train/train-cpu.sh > .gpu/cpu-run.log 2>&1 &
#
# Trains the shipped adapters further (--lora-init models/coret-lora.safetensors, lr 2e-4, as the
# GPU plan's warm run `encw`) on a balanced sample: each language family's mined shards in
# repos-multi.tsv's round-robin order until the family holds MULTI_PLAN_FAMILY examples, plus
# train-prs' shard (Python). Niced, so it only takes what builds leave. A checkpoint lands under
# $STORE/cpu-run/checkpoint every VAL_EVERY updates; run the script again after a stop and it goes
# on with --resume from the last one. Each checkpoint's adapters are evaluated with
# scripts/eval/eval-checkpoint.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STORE=${STORE:-$ROOT/.gpu}
BIN=${CORET_TUI:-$ROOT/target/release/coret-tui}
OUT=${OUT:-$STORE/cpu-run}
export MULTI_PLAN_FAMILY=${MULTI_PLAN_FAMILY:-600}
VAL_EVERY=${VAL_EVERY:-10}
# shellcheck source=gpu/lib.sh
. "$ROOT/scripts/gpu/lib.sh"

cd "$STORE"
shards=(shards/train1.shard $(multi_shards))
first=${shards[0]}
rest=$(printf '%s\n' "${shards[@]:1}" | paste -sd, -)
n=0
for s in "${shards[@]}"; do n=$((n + $(cat "${s%.shard}.count"))); done
echo "$(date -u +%FT%TZ) cpu-run: ${#shards[@]} shards, $n examples; $(multi_family_counts | paste -sd' ')"

flags=(--train "$first" --more-shards "$rest" --output "$OUT" --batch 32 --negatives 16
  --epochs 1 --grad-slice 32 --seed 0 --lr 2e-4 --lora-rank 32 --val-every "$VAL_EVERY")
if [ -f "$OUT/checkpoint/state.json" ] || [ -f "$OUT/checkpoint.old/state.json" ]; then
  flags+=(--resume)
else
  flags+=(--lora-init "$ROOT/models/coret-lora.safetensors")
fi
exec nice -n 19 "$BIN" --device cpu "${flags[@]}"
