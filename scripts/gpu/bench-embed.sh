#!/usr/bin/env bash
# On the GPU machine (issue 62): `--bench embed`'s figures per stage on a carried repository —
# the tokenizer stage on every core and on one thread, the forward pass alone, tokenise-then-
# forward (the loop before the pipeline) and the pipeline, with where its time went and which
# stage bounds it — in bf16 and f32, then sentence-transformers on the same texts where this
# Python has it. A few minutes at most; run it in the lease's first call, after the binary and
# the model are unpacked (plan.sh --call N puts them at $W/coret-tui and $W/base).
#
#   bash scripts/gpu/bench-embed.sh [SOURCE...]
#
# SOURCE: a plain source tree, or a slim bare repository from make_pack.py (checked out, .py
# files only, at its base commit in $W/dev/dev51.jsonl). Default: pylint from the dev pack that
# plan.sh's uploads carry ($W/dev/pack-ns/pylint-dev+pylint/repo). Figures go to stdout and to
# $OUT/bench-embed-PRECISION.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
W=${W:-/tmp/w}
OUT=${OUT:-$W/out}
BIN=${BIN:-$W/coret-tui}
MODEL=${MODEL:-$W/base}
PRECISIONS=${PRECISIONS:-bf16 f32}
BATCH=${BATCH:-256}
CHUNKS=${CHUNKS:-100000}
LIMIT=${LIMIT:-150}          # seconds per run: a stuck run must not eat the lease
DEVICE=${DEVICE:-cuda}        # cpu: a rehearsal here with the CPU binary
mkdir -p "$OUT" "$W/bench-src"
# LD_LIBRARY_PATH for the CUDA libraries, and `checkout PACK SHA DIR`.
source scripts/gpu/env.sh >/dev/null 2>&1 || true
[ -x "$BIN" ] || { echo "bench-embed: no binary at $BIN" >&2; exit 1; }
[ -f "$MODEL/model.safetensors" ] || { echo "bench-embed: no model at $MODEL" >&2; exit 1; }

# A source tree for SOURCE: itself, or a checkout of a slim bare repository.
tree_of() {
  local src=$1
  if [ ! -d "$src/objects" ]; then echo "$src"; return; fi
  local name; name=$(basename "$(dirname "$src")")          # owner+name
  local slug=${name/+//}
  local sha; sha=$(grep -h -m1 "\"$slug\"" "$W"/dev/*.jsonl 2>/dev/null |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["base_commit"])' 2>/dev/null)
  [ -n "$sha" ] || { echo "bench-embed: no base commit for $slug in $W/dev/*.jsonl" >&2; return 1; }
  local dir=$W/bench-src/$name
  [ -d "$dir" ] || checkout "$src" "$sha" "$dir"
  echo "$dir"
}

st=()
python3 -c 'import sentence_transformers' 2>/dev/null && st=(--st-python python3)
[ $# -gt 0 ] || set -- "$W/dev/pack-ns/pylint-dev+pylint/repo"
for src in "$@"; do
  dir=$(tree_of "$src") || continue
  echo "== $dir: $(find "$dir" -name '*.py' | wc -l) .py files, $(nproc) cores"
  for p in $PRECISIONS; do
    # sentence-transformers once (in the first precision's run): its figures do not depend on ours.
    timeout -k 10 "$LIMIT" "$BIN" --model "$MODEL" --device "$DEVICE" --precision "$p" --batch-size "$BATCH" \
      --bench embed "$dir" --bench-chunks "$CHUNKS" --no-cache "${st[@]}" 2>&1 |
      tee -a "$OUT/bench-embed-$p.txt"
    echo "exit ${PIPESTATUS[0]} ($p)" | tee -a "$OUT/bench-embed-$p.txt"
    st=()
  done
done
