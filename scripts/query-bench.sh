#!/usr/bin/env bash
# Alternates the CPU forward pass and candle-transformers' BERT (CORET_BERT=candle) in
# `--bench query`, N times each; prints one line per run: which, then the medians (ms) of the
# 21-, 154- and 512-token queries and of the search alone.
# Usage: scripts/query-bench.sh REPO [N]   (REPO: e.g. a checkout of psf/requests)
set -euo pipefail
BIN=${CORET_TUI_BIN:-target/release/coret-tui}
for _ in $(seq "${2:-5}"); do
  for m in cpu candle; do
    if [ "$m" = candle ]; then export CORET_BERT=candle; else unset CORET_BERT; fi
    echo "$m $("$BIN" "$1" --bench query --device cpu 2>&1 | grep -oE 'median [0-9.]+' | awk '{printf "%s ", $2}')"
  done
done
