#!/usr/bin/env bash
# On the GPU machine: train several variants at once, one process each, stop those still
# running after DEADLINE seconds (SIGINT: each writes its resumable checkpoint), then evaluate
# every finished variant and the shipped adapters on DEV at f32, so that the figures are the
# CPU's. At once they share the GPU rather than add to it (session 21 on an H200: 100 % busy,
# ~82,000 instances an hour for three runs against ~74,000 for one alone on an H100), so give
# DEADLINE ~250 s per run of the shipped recipe's size (5,382 instances). What comes back: one
# archive per variant in $OUT (logs, adapters, an unfinished run's checkpoint, eval summaries).
#   DEADLINE=400 EVAL_DEADLINE=110 SOUPS=NAME scripts/gpu/race.sh DEV PACKS NAME='TRAIN ARGS'...
set -uo pipefail
source "$(dirname "$0")/env.sh"
dev=$(realpath "$1") packs=$(realpath "$2"); shift 2
repo=$(pwd)
cd "$W" && mkdir -p res
data="--train shards/train.shard --more-shards shards/train2.shard,shards/train3.shard,shards/train4.shard"
# Four runs at --grad-slice 32 need ~110 GB (27 GB each on the H100 of session 14).
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
slice=16; [ "$mem" -gt 120000 ] && slice=32
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 10 > res/smi.csv &
smi=$!
evaluate() { # NAME WEIGHTS
  # shellcheck disable=SC2086
  timeout "${EVAL_DEADLINE:-110}" $T $B --precision f32 $2 --eval "$dev" --repos "$packs" \
    --retriever dense,hybrid --cache-dir "$W/cache-$1" --out "res/eval-$1" > "res/eval-$1.log" 2>&1
}
start=$SECONDS
names=()
for spec in "$@"; do
  name=${spec%%=*} args=${spec#*=}
  names+=("$name")
  echo "$(date +%T) train $name: $args --grad-slice $slice"
  # shellcheck disable=SC2086
  ( $T $B $data $args --grad-slice $slice --val-every 50 --output "res/$name" > "res/$name.train.log" 2>&1 \
      && touch "res/$name/done" ) &
done
sleep 10
# By process name (the evaluation too, if still running): SIGINT to the timing wrapper
# (python) would kill its child before the child checkpoints.
while [ $((SECONDS - start)) -lt "${DEADLINE:-400}" ] && pgrep -x coret-tui > /dev/null; do sleep 5; done
if pgrep -x coret-tui > /dev/null; then
  echo "$(date +%T) deadline: stopping $(pgrep -x coret-tui | wc -l) runs"
  pkill -INT -x coret-tui
  for _ in $(seq 30); do pgrep -x coret-tui > /dev/null || break; sleep 1; done
  pkill -KILL -x coret-tui
fi
for job in $(jobs -p); do [ "$job" = "$smi" ] || wait "$job"; done
echo "$(date +%T) training over after $((SECONDS - start)) s"
for n in "${names[@]}"; do echo "$n: $(tail -c 300 "res/$n.train.log" | tr '\n' ' ')"; done
# SOUPS=NAME...: also the mean of the shipped adapters and NAME's (scripts/train/lora_soup.py).
for n in ${SOUPS:-}; do
  [ -f "res/$n/done" ] || continue
  mkdir -p "res/soup-$n" && python3 "$repo/scripts/train/lora_soup.py" "$repo/models/coret-lora.safetensors" \
    "res/$n/coret-lora.safetensors" "res/soup-$n/coret-lora.safetensors" 0.5 && touch "res/soup-$n/done" \
    && names+=("soup-$n")
done
# The shipped adapters first, alone (beside three trainings it had not finished the 51 in six
# minutes): its chunking cache (*.syntax) then spares the others the CPU's work.
evaluate shipped ""
eval_pids=()
for n in "${names[@]}"; do
  [ -f "res/$n/done" ] || continue
  mkdir -p "$W/cache-$n" && cp "$W"/cache-shipped/*.syntax "$W/cache-$n/" 2>/dev/null
  evaluate "$n" "--weights res/$n/coret-lora.safetensors" & eval_pids+=($!)
done
wait "${eval_pids[@]}"
kill "$smi" 2>/dev/null
for n in shipped "${names[@]}"; do [ -f "res/eval-$n.log" ] || continue; echo "== eval $n"; tail -12 "res/eval-$n.log"; done
for n in "${names[@]}" shipped; do
  # A finished run needs no checkpoint; an unfinished one needs it (to resume) more than its steps.
  # A file over 16 MiB does not come back (rank 32's step files did that): then without them.
  skip='*/checkpoint'; [ -f "res/$n/done" ] || skip='*-step*'
  pack() { tar czf "$OUT/$n.tar.gz" --exclude='*/model.safetensors' --exclude="$skip" "$@" res/"$n"* res/eval-"$n"* 2>/dev/null; }
  pack
  [ "$(stat -c %s "$OUT/$n.tar.gz")" -le 16777216 ] || pack --exclude='*-step*'
done
cp res/smi.csv "$OUT/" 2>/dev/null
ls -la "$OUT"
