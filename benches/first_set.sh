#!/usr/bin/env bash
# The cold first dense answer against the size of the query-first set (issue 61 item 2): the
# headless hybrid (`--query - --json`) on a never-indexed checkout, fresh cache each run, at
# BM25's top 100, 200 and 500 and at the default (a fifth of the repository, 100 to 500).
# Run on idle cores (pause other work first).
#
#   benches/first_set.sh REPO ISSUE_FILE [BINARY]
set -euo pipefail
repo=$1 issue=$2 bin=$(realpath "${3:-target/release/coret-tui}")
for n in 100 200 500 default; do
  flag=(--query-first "$n"); [ "$n" = default ] && flag=()
  cache=$(mktemp -d)
  t0=$(date +%s.%N)
  CORET_CACHE_DIR=$cache "$bin" "$repo" --query - --json "${flag[@]}" < "$issue" > "$cache/answer.json"
  t1=$(date +%s.%N)
  python3 - "$cache/answer.json" "$n" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["stats"]
top = [h["path"].rsplit("/", 1)[-1] + ":" + h.get("name", "") for h in d.get("hits", [])[:3]]
print(json.dumps({"first_set": sys.argv[2], "wall_s": round(float(sys.argv[3]), 1), "chunks": s.get("chunks"),
                  "dense_coverage": s.get("dense_coverage"), "timings": s.get("timings"), "top3": top}))
PY
  rm -rf "$cache"
done
