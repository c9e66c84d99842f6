#!/usr/bin/env bash
# Issue 60 item 4: one checkpoint's adapters on both dev sets, then issue 60's rule against the
# shipped adapters' runs of the same commands (scripts/eval/ship_rule.py).
#
#   REPOS=DIR scripts/eval/eval-checkpoint.sh ADAPTERS OUT [multi|python|both]
#
# DIR holds the dev repositories as bare mirrors (DIR/<owner>+<name>/repo). Both sets run as the
# RESULTS' current figures do: --query-first 200, BM25, dense and hybrid. OUT/multi and
# OUT/python are the --eval --out directories. BASE_MULTI and BASE_PY (the shipped adapters'
# runs, default target/issues/multi-s33 and py-s32b) are what the rule compares with. Niced: it
# runs beside builds and the CPU training run. A new checkpoint embeds every candidate afresh
# (its vectors are keyed by its weights): about 30 min for the multi set, 40 for Python here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ADAPTERS=${1:?usage: scripts/eval/eval-checkpoint.sh ADAPTERS OUT [multi|python|both]}
OUT=${2:?usage: scripts/eval/eval-checkpoint.sh ADAPTERS OUT [multi|python|both]}
WHICH=${3:-both}
BIN=${CORET_TUI:-$ROOT/target/release/coret-tui}
REPOS=${REPOS:?set REPOS to the folder of bare mirrors}
BASE_MULTI=${BASE_MULTI:-$ROOT/target/issues/multi-s33}
BASE_PY=${BASE_PY:-$ROOT/target/issues/py-s32b}
[ -f "$ADAPTERS" ] || { echo "$ADAPTERS: no such adapters file" >&2; exit 2; }
mkdir -p "$OUT"

run() { # SET DATA
  local set=$1 data=$2
  [ -f "$OUT/$set/summary.json" ] && { echo "$set: already evaluated ($OUT/$set)"; return 0; }
  echo "$(date -u +%FT%TZ) $set: evaluating $ADAPTERS"
  nice -n 10 "$BIN" --eval "$data" --repos "$REPOS" --weights "$ADAPTERS" --retriever bm25,dense,hybrid \
    --query-first 200 --out "$OUT/$set" > "$OUT/$set.log" 2>&1
  echo "$(date -u +%FT%TZ) $set: done"
}

case $WHICH in multi|both) run multi "$ROOT/../shared/data/multi-swe-dev.jsonl" ;; esac
case $WHICH in python|both) run python "$ROOT/../shared/data/swebench-lite-dev.jsonl" ;; esac

args=(--base-multi "$BASE_MULTI" --cand-multi "$OUT/multi")
[ -f "$OUT/python/summary.json" ] && args+=(--base-py "$BASE_PY" --cand-py "$OUT/python")
[ -f "$OUT/multi/summary.json" ] && python3 "$ROOT/scripts/eval/ship_rule.py" "${args[@]}" | tee "$OUT/rule.txt"
