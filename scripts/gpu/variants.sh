#!/usr/bin/env bash
# On the GPU machine: train each named variant on the same shards and budget, then evaluate
# it on DEV (dense and hybrid). Idempotent: a variant trained or evaluated before is skipped, so
# the next call goes on where this one stopped.
#   scripts/gpu/variants.sh DEV PACKS TAG VARIANT...      (VARIANT: r8 r32 full top2 shipped)
set -uo pipefail
source "$(dirname "$0")/env.sh"
dev=$1 packs=$2 tag=$3; shift 3
cd "$W" && mkdir -p res
data="--train shards/train.shard --more-shards ${MORE_SHARDS:-shards/train2.shard,shards/train3.shard}"
common="--batch ${BATCH:-32} --negatives 16 --epochs ${EPOCHS:-2} --grad-slice 128 --seed 0 --val-every 50"
for v in "$@"; do
  case $v in
    r8) train="--lora-rank 8 --lr 5e-4"; weights="--weights res/r8/coret-lora.safetensors" ;;
    r32) train="--lora-rank 32 --lr 5e-4"; weights="--weights res/r32/coret-lora.safetensors" ;;
    full) train="--lr 2e-5"; weights="--weights pretrained" ;;
    top2) train="--train-layers 2 --lr 5e-5"; weights="--weights pretrained --tower-layers res/top2/tower-layers.safetensors" ;;
    shipped) train=""; weights="" ;;
    *) echo "unknown variant $v"; exit 2 ;;
  esac
  if [ -n "$train" ] && [ ! -f "res/$v/done" ]; then
    echo "$(date +%T) train $v"
    resume=""; [ -f "res/$v/checkpoint/state.json" ] && resume="--resume"
    $T $B $data $common $train $resume --output "res/$v" >> "res/$v.train.log" 2>&1 && touch "res/$v/done"
    tail -4 "res/$v.train.log"
  fi
  model="$B"
  [ "$v" = full ] && model="$W/coret-tui --model res/full --device cuda --batch-size 256"
  if [ ! -f "res/$v-$tag/summary.json" ]; then
    echo "$(date +%T) eval $v on $tag"
    $T $model $weights --eval "$dev" --repos "$packs" --retriever dense,hybrid --cache-dir "$W/cache" \
      --out "res/$v-$tag" > "res/$v-$tag.log" 2>&1
    tail -8 "res/$v-$tag.log"
  fi
done
