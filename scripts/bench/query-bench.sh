#!/usr/bin/env bash
# Alternates encoder variants in `--bench query`, N rounds; prints one line per run: the
# variant, then the medians (ms) of the 21-, 154- and 512-token queries and of the search alone.
# Variants: f32 and bf16 (`--precision`) of the CPU forward pass, candle (candle-transformers'
# BERT, CORET_BERT=candle).
# Usage: scripts/bench/query-bench.sh REPO [N] [VARIANT...]   (REPO: e.g. a checkout of psf/requests;
#        default variants: f32 bf16)
set -euo pipefail
BIN=${CORET_TUI_BIN:-target/release/coret-tui}
repo=$1
rounds=${2:-5}
shift $(($# < 2 ? $# : 2))
variants=("${@:-f32 bf16}")
read -r -a variants <<<"${variants[*]}"
for _ in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    case $v in
      candle) env=(CORET_BERT=candle); precision=f32 ;;
      *) env=(); precision=$v ;;
    esac
    echo "$v $(env "${env[@]}" "$BIN" "$repo" --bench query --device cpu --precision "$precision" 2>&1 | grep -oE 'median [0-9.]+' | awk '{printf "%s ", $2}')"
  done
done
