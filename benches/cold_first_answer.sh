#!/usr/bin/env bash
# The first answers of every client on a never-indexed repository (#53): headless, TUI, MCP, each
# with a fresh cache, one after the other. Run on idle cores: pause other work first.
#
#   benches/cold_first_answer.sh REPO ISSUE_FILE [BINARY]
#
# Needs `cargo build --release --examples` (the TUI is driven in a pseudo-terminal by
# examples/tui_cold.rs) and `pip install mcp` (benches/mcp_cold.py). Prints one JSON line each.
set -euo pipefail
repo=$1 issue=$2 bin=$(realpath "${3:-target/release/coret-tui}")
fresh() { CORET_CACHE_DIR=$(mktemp -d) "$@"; }
echo "== headless (one answer: the hybrid over the issue's candidates, embedded first)"
t0=$(date +%s.%N)
fresh "$bin" "$repo" --query - --json < "$issue" > /tmp/cold-headless.json
python3 -c "import json,sys; d=json.load(open('/tmp/cold-headless.json')); s=d['stats']; print(json.dumps({'wall_s': round($(date +%s.%N) - $t0, 1), 'timings': s.get('timings'), 'dense_coverage': s.get('dense_coverage'), 'chunks': s.get('chunks')}))"
echo "== TUI (first answer over what is embedded, then over the issue's own chunks)"
fresh target/release/examples/tui_cold "$bin" "$repo" "$issue"
echo "== MCP (first locate, then the first hybrid over the issue's chunks)"
fresh python3 benches/mcp_cold.py "$bin" "$repo" "$issue"
