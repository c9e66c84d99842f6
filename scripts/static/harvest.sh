#!/usr/bin/env bash
# The static table's distillation targets at scale (issue 80), resumable:
#
#   scripts/static/harvest.sh [OUT]     # default OUT: .gpu/harvest (git-ignored)
#
# Checks that no repository of scripts/static/harvest-repos.txt is on a list it must not be on
# (../shared/DESIGN.md's, scripts/mine/repos-newlangs-dev.tsv, newcomer-fixes.tsv, the questions
# set), then runs `coret-tui --static-harvest OUT` over the mirrors (MIRRORS, default
# /work/.mirror; `fetch` them first). Each repository's file is written when it is done; a
# rerun embeds only the repositories without one. Then, e.g.:
#   coret-tui --static-build T.safetensors --static-from models/coret-static.safetensors \
#     --static-fit SHARDS --static-regress 3 --static-targets OUT --static-target-max 300000
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-.gpu/harvest}
MIRRORS=${MIRRORS:-/work/.mirror}
BIN=${CORET_TUI:-target/release/coret-tui}
repos=$(grep -v '^#' scripts/static/harvest-repos.txt | tr -s ' \n' '\n' | grep . )
for r in $repos; do
  for f in ../shared/DESIGN.md scripts/mine/repos-newlangs-dev.tsv scripts/mine/newcomer-fixes.tsv data/questions/*.jsonl; do
    [ -f "$f" ] || continue
    if grep -qiF "$r" "$f"; then echo "harvest.sh: $r is listed in $f: never harvested" >&2; exit 2; fi
  done
done
nice "$BIN" --static-harvest "$OUT" --repos "$MIRRORS" --train-repos "$(echo $repos | tr ' ' ',')" \
  --harvest-chunks "${HARVEST_CHUNKS:-4000}" --harvest-messages "${HARVEST_MESSAGES:-1000}"
