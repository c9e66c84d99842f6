#!/usr/bin/env bash
# One training update, timed: seconds (from the training log), peak resident memory, loss and
# gradient norm. Compare engines by running their binaries one after the other on an otherwise
# idle machine; the loss and norm must agree.
#
#   benches/train_update.sh BIN SHARD[,MORE_SHARDS] [BATCH [RANK]]
#   e.g. benches/train_update.sh target/release/coret-tui train.shard,train2.shard 64
#        benches/train_update.sh target/release/coret-tui train2.shard 16 32   # LoRA rank 32
#
# SHARD files come from `coret-tui --train ... --prepare-shard` (models/README.md).
set -euo pipefail
bin=${1:?binary}; shards=${2:?shard[,more]}; batch=${3:-64}; rank=${4:-8}
first=${shards%%,*}; more=""
[[ $shards == *,* ]] && more="--more-shards ${shards#*,}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2086
/usr/bin/time -f "peak resident %M KB" "$bin" --train "$first" $more --output "$out/run" --lora-rank "$rank" \
    --lr 5e-4 --batch "$batch" --negatives 16 --epochs 1 --grad-slice 8 --seed 0 --max-steps 1 2>&1 |
    grep -E "^step|peak resident"
