#!/usr/bin/env bash
# On the GPU machine: --bench embed on pylint's .py files (one dev base commit), f32 and bf16.
source "$(dirname "$0")/env.sh"
cd "$W" && mkdir -p bench
repo=pack-ns/pylint-dev+pylint/repo
sha=$(grep -m1 '"pylint-dev/pylint"' dev51.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["base_commit"])')
[ -d pylint ] || checkout "$repo" "$sha" pylint
echo "pylint $sha: $(find pylint -name '*.py' | wc -l) files"
for p in f32 bf16; do
  $T $B --precision $p --bench embed pylint --bench-chunks 100000 --no-cache --st-python python3 \
    > "bench/embed-$p.txt" 2>&1
  tail -12 "bench/embed-$p.txt"
done
