#!/usr/bin/env bash
# The static tier's table (issue 72), by one command, resumable (each step skips what exists):
#
#   scripts/static/build.sh [OUT]        # default OUT: models/coret-static.safetensors
#
# 1. shards (scripts/gpu/prepare.sh, STORE=.gpu): train-prs' slices (STATIC_TRAIN_STEPS, default
#    `trainprs`: its four slices) and the doc-comment pairs of every mirrored repository of
#    scripts/mine/repos-multi.tsv (STATIC_DOC_STEPS, default `docsall`); the validation split
#    (../shared/data/swebench-lite-devsplit.jsonl) as a shard of its own. Never a dev set.
# 2. coret-tui --static-build: every vocabulary token through the chunk tower (the shipped
#    adapters merged), SIF weights from train-prs' issues and patches, the common direction
#    removed; then the CoRet loss on the shards (STATIC_FIT_ARGS), validation after every pass.
# Needs the mirrors (MIRRORS, default /work/.mirror: `fetch` of train-prs' ten repositories and
# of repos-multi.tsv's) and the release binary (built here if CORET_TUI is not given).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${1:-$ROOT/models/coret-static.safetensors}
export STORE=${STORE:-$ROOT/.gpu} MIRRORS=${MIRRORS:-/work/.mirror}
SHARED=${SHARED:-$ROOT/../shared/data}
BIN=${CORET_TUI:-$ROOT/target/release/coret-tui}
[ -n "${CORET_TUI:-}" ] || nice cargo build --release --quiet
export CORET_TUI=$BIN
"$BIN" --fetch-model > /dev/null

# shellcheck disable=SC2086 # step lists
scripts/gpu/prepare.sh ${STATIC_TRAIN_STEPS:-trainprs} ${STATIC_DOC_STEPS:-docsall} || true
VAL=$STORE/shards/static-val.shard
if [ ! -f "$VAL" ]; then
  nice "$BIN" --train "$SHARED/swebench-lite-devsplit.jsonl" --repos "$MIRRORS" --negatives 16 \
    --bm25-negatives 8 --query-max-len 256 --prepare-shard "$VAL.tmp" > "$STORE/logs/static-val.log" 2>&1
  mv "$VAL.tmp" "$VAL"
fi
shards=$(ls "$STORE"/shards/train*.shard "$STORE"/shards/docs/*.shard 2>/dev/null | paste -sd, -)
[ -n "$shards" ] || { echo "build.sh: no training shards in $STORE/shards" >&2; exit 1; }
# shellcheck disable=SC2086 # flags are a list
nice "$BIN" --static-build "$OUT" --static-corpus "$SHARED/train-prs.jsonl.gz" \
  --static-fit "$shards" --static-val "$VAL" ${STATIC_FIT_ARGS:-}
