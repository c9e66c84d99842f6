#!/usr/bin/env bash
# A dense model's hybrid beside another's on the same instances (issue 82: the 3-layer student
# against the tower; docs/RESULTS.md "A 3-layer student"): the questions set's 260 held-out
# questions, every 4th Python dev instance and every 8th multi-language one, query-first 200.
#
#   scripts/eval/student_evals.sh OUT [--model DIR]        # no --model: the shipped tower
#
# BIN (default target/release/coret-tui), MIRRORS (/work/.mirror), QUESTIONS (the held-out
# questions as instances: scripts/eval/questions_to_instances.py --split heldout). A run whose
# summary exists is kept.
set -euo pipefail
OUT=$1; shift
BIN=${BIN:-target/release/coret-tui}
MIRRORS=${MIRRORS:-/work/.mirror}
QUESTIONS=${QUESTIONS:-target/questions/heldout.jsonl}
PY=../shared/data/swebench-lite-dev.jsonl MULTI=../shared/data/multi-swe-dev.jsonl
every() { python3 -c "import json,sys; ids=[json.loads(l)['instance_id'] for l in open(sys.argv[1])]; print(','.join(ids[::int(sys.argv[2])]))" "$1" "$2"; }
mkdir -p "$OUT"
run() { # NAME FILE [flags…]
  local name=$1 file=$2; shift 2
  [ -f "$OUT/$name/summary.json" ] && return 0
  nice "$BIN" --eval "$file" --repos "$MIRRORS" --retriever bm25,dense,hybrid --query-first 200 "$@" \
    --out "$OUT/$name" > "$OUT/$name.log" 2>&1
}
run q "$QUESTIONS" --keep-lists 200 "$@"
run multi "$MULTI" --instances "$(every "$MULTI" 8)" "$@"
run py "$PY" --instances "$(every "$PY" 4)" "$@"
scripts/eval/score_questions.py "$OUT/q" | grep -E '^run| all '
for s in py multi; do
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['retrievers']; print(sys.argv[2], ' '.join(f'{k} {r[k][\"mrr\"]:.4f}' for k in ('bm25','dense','hybrid')))" "$OUT/$s/summary.json" "$s"
done
