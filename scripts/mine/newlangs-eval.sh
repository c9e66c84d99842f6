#!/usr/bin/env bash
# Issue 63 item 3: each new language's dev file (scripts/mine/newlangs-dev.sh) through `--eval`
# with BM25, dense and hybrid, as the multi-language dev set is measured (dense over each
# issue's query-first candidates, BM25's top 200 and their neighbours); then one table:
# instances, and MRR / recall@20 per retriever, per language.
#
#   [CORET_TUI=target/release/coret-tui] [MIRRORS=/work/.mirror] scripts/mine/newlangs-eval.sh [DEV] [OUT]
#
# DEV: the dev files' folder (target/newlangs-dev); OUT: target/newlangs-eval. A language whose
# OUT/LANG/summary.json exists is not run again (delete it to rerun).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath -m "${CORET_TUI:-$ROOT/target/release/coret-tui}")
MIRRORS=$(realpath -m "${MIRRORS:-/work/.mirror}")
DEV=$(realpath -m "${1:-$ROOT/target/newlangs-dev}")
OUT=$(realpath -m "${2:-$ROOT/target/newlangs-eval}")
QUERY_FIRST=${QUERY_FIRST:-200}
# The languages to run and tabulate (a space list): #63's six by default, #70's five with
# LANGS="elixir bash haskell lua zig".
LANGS=${LANGS:-csharp ruby php kotlin swift scala}
[[ -x "$BIN" ]] || { echo "newlangs-eval.sh: no coret-tui at $BIN (set CORET_TUI)" >&2; exit 2; }
for lang in $LANGS; do
  file=$DEV/$lang.jsonl
  [[ -s "$file" ]] || { echo "newlangs-eval.sh: no $file (run newlangs-dev.sh)" >&2; exit 2; }
  [[ -s "$OUT/$lang/summary.json" ]] && continue
  "$BIN" --eval "$file" --repos "$MIRRORS" --retriever bm25,dense,hybrid \
    --query-first "$QUERY_FIRST" --out "$OUT/$lang" > "$OUT.$lang.log" 2>&1 || {
    echo "newlangs-eval.sh: $lang failed, see $OUT.$lang.log" >&2
    exit 1
  }
done
python3 - "$OUT" $LANGS <<'PY'
import json, sys
out = sys.argv[1]
print("| language | instances | BM25 MRR / R@20 | dense MRR / R@20 | hybrid MRR / R@20 | hybrid PR@5 |")
print("| --- | --- | --- | --- | --- | --- |")
for lang in sys.argv[2:]:
    s = json.load(open(f"{out}/{lang}/summary.json"))
    r = s["retrievers"]
    cell = lambda k: f'{r[k]["mrr"]:.3f} / {r[k]["recall@20"]:.3f}'
    print(f'| {lang} | {s["n_with_gold"]} | {cell("bm25")} | {cell("dense")} | {cell("hybrid")} | {r["hybrid"]["perfect_recall@5"]:.3f} |')
PY
