#!/usr/bin/env bash
# The ranking layer's ablation (issue 80): one eval per variant over the same instances, each
# a flag set on top of the defaults, then the questions' scores (NDCG@10 by files and rows).
#
#   scripts/eval/layer_ablation.sh INSTANCES OUT [TIER_FLAGS] -- NAME='FLAGS' NAME='FLAGS' ...
#
# e.g. scripts/eval/layer_ablation.sh target/questions/instances.jsonl bench-out/q '--dense static' \
#        -- off='--no-ranking-layer' defaults='' role='--role-prior 0.5'
# Runs are skipped when OUT/NAME/summary.json exists (resumable). REPOS defaults to /work/.mirror.
set -euo pipefail
INSTANCES=$1 OUT=$2 TIER=${3:-}
shift 3
[ "${1:-}" = "--" ] && shift
BIN=${CORET_TUI:-target/release/coret-tui}
REPOS=${REPOS:-/work/.mirror}
runs=()
for spec in "$@"; do
  name=${spec%%=*} flags=${spec#*=}
  runs+=("$OUT/$name")
  [ -f "$OUT/$name/summary.json" ] && continue
  # shellcheck disable=SC2086 # flag lists
  "$BIN" --eval "$INSTANCES" --repos "$REPOS" $TIER --retriever bm25,dense,hybrid --keep-lists 200 \
    $flags --out "$OUT/$name" > "$OUT/$name.log" 2>&1
done
if grep -q '"files"' "$INSTANCES"; then
  "$(dirname "$0")/score_questions.py" "${runs[@]}" --by "${BY:-split}"
fi
