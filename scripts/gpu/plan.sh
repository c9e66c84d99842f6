#!/usr/bin/env bash
# One GPU lease, one plan (#54): what prepare.sh made goes up in as few uploads as fit, and the
# last upload's call trains, evaluates and sends back, collecting after every stage.
#
# Here (no GPU):
#   scripts/gpu/plan.sh --pack PLAN        # PLAN: trainprs 5k 15k all multi; fills .gpu/up/1..M and
#                                          # prints each call's `run` (carry .gpu/up/N)
#   scripts/gpu/plan.sh --rehearse         # the same plan on this CPU: a tiny repository, a few
#                                          # updates, the test model if CORET_MODEL names one
# There (`run`, from the checkout; LEFT = `status`'s budget_left_s just before the call):
#   bash scripts/gpu/plan.sh --call N --left LEFT
#
# A call unpacks its upload into W (/tmp/w: it lasts while the machine stays warm, 30 s after
# a call). Once every upload is there it runs the stages not done yet, each into W/res and then
# into $OUT/STAGE.tar.gz (so a lost call loses one stage):
#   a  enc      LoRA r 32 from the pretrained model on every shard carried, one epoch or as many
#               updates as the deadline allows (RATE instances/s)
#   d  eval     dense and hybrid on the 51 tuning instances, for each model trained
#   b  enc64    LoRA r 64 on the same data, if the time left holds a run like a's and its eval
#   c  rerank   the reranker on the same shards, if time is left
# The multi plan (#60: train-prs and mined fixes in seven languages) runs instead:
#   a  enc      as above, with half the time (MULTI_FIRST=warm: w first)
#   d  eval     on the 51
#   w  encw     LoRA r 32 from the shipped adapters (models/coret-lora.safetensors; WARM_INIT),
#               lr 2e-4, the time that is left
#   d  eval     on the 51, then on the multi-language dev set (devm, --query-first 200) when
#               the plan carried it and time is left
# A training run the call's deadline stops keeps its checkpoint; the next call (any N past the
# last upload, with no upload) resumes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STORE=${STORE:-$ROOT/.gpu}
source "$ROOT/scripts/gpu/lib.sh"

W=${W:-/tmp/w}
DEVICE=${DEVICE:-cuda}
# H200 alone: ≈ 84,000 instances an hour at updates of 32, r 32, --grad-slice 32 (RESULTS.md, session 21).
RATE=${RATE:-23}
BATCH=${BATCH:-32}
NEGATIVES=${NEGATIVES:-16}
GRAD_SLICE=${GRAD_SLICE:-32}
EVAL_SECONDS=${EVAL_SECONDS:-75}     # the 51 took 36–50 s an evaluation on the H200
CALL_LIMIT=${CALL_LIMIT:-600}        # `run`'s most seconds for one command
MARGIN=${MARGIN:-25}                 # unpacking, collecting, the reply
MAX_STEPS=${MAX_STEPS:-}             # a fixed number of updates (the rehearsal's)
EXTRA=${EXTRA:---batch-size 256}     # flags every coret-tui call gets (the GPU's embedding batch)
WARM_INIT=${WARM_INIT:-$ROOT/models/coret-lora.safetensors} # the multi plan's warm start
MULTI_FIRST=${MULTI_FIRST:-cold}     # the multi plan's first run: cold (pretrained) or warm

log() { echo "$(date +%T) plan: $*" | tee -a "$W/plan.log" >&2; }

# ---- here -----------------------------------------------------------------------------------

pack() {
  local plan=$1 u item
  local uploads; uploads=$(STALE=$(bash "$ROOT/scripts/gpu/prepare.sh" --stale) plan_uploads "$plan")
  if echo "$uploads" | grep -q -E ' (missing|stale)$' || [ -n "$(plan_gap "$plan")" ]; then
    echo "plan.sh: $plan is not ready; prepare.sh --status says what is missing" >&2
    return 1
  fi
  rm -rf "$STORE/up"
  local m; m=$(echo "$uploads" | awk '{ if ($1 > m) m = $1 } END { print m }')
  while read -r u item _; do
    mkdir -p "$STORE/up/$u/$(dirname "$item")"
    cp -al "$STORE/$item" "$STORE/up/$u/$item"
  done <<< "$uploads"
  for u in $(seq 1 "$m"); do
    printf '%s %s\n' "$plan" "$m" > "$STORE/up/$u/manifest"
    echo "call $u: carry [\".gpu/up/$u\"], $(mb "$(bytes_of "up/$u")") + the tree:" \
      "bash scripts/gpu/plan.sh --call $u --left LEFT"
  done
  echo "then, while budget is left: bash scripts/gpu/plan.sh --call $((m + 1)) --left LEFT (resumes, evaluates)"
}

# ---- there ----------------------------------------------------------------------------------

unpack() { # N: the call's upload into W
  local up=$STORE/up/$1
  [ -d "$up" ] || return 0
  mkdir -p "$W"
  cp -a "$up/." "$W/"
  touch "$W/.unpacked-$1"
  if [ -f "$W/bin/coret-tui.xz" ] && [ ! -x "$W/coret-tui" ]; then
    xz -dc "$W/bin/coret-tui.xz" > "$W/coret-tui.tmp" && chmod +x "$W/coret-tui.tmp" && mv "$W/coret-tui.tmp" "$W/coret-tui"
  fi
  if [ -f "$W/model/model.xz.00" ] && [ -f "$W/model/model.xz.01" ] && [ ! -f "$W/base/model.safetensors" ]; then
    mkdir -p "$W/base"
    cat "$W"/model/model.xz.0* | xz -dc > "$W/base/model.safetensors.tmp"
    mv "$W/base/model.safetensors.tmp" "$W/base/model.safetensors"
    (cd "$W/base" && sha256sum -c ../model/model.sha256 >&2)
    cp "$W/model/config.json" "$W/model/tokenizer.json" "$W/base/"
    rm -f "$W"/model/model.xz.0*
  fi
  log "call $1: unpacked $(du -sh "$up" | cut -f1)"
}

# Every upload of the plan unpacked (the manifest says how many), so training sees all shards.
ready() {
  local m u
  m=$(awk '{ print $2 }' "$W/manifest" 2>/dev/null)
  [ -n "$m" ] || return 1
  for u in $(seq 1 "$m"); do [ -f "$W/.unpacked-$u" ] || return 1; done
  [ -x "$W/coret-tui" ] && [ -f "$W/base/model.safetensors" ] && [ -d "$W/dev/pack-ns" ] && [ -n "$(shards)" ]
}
shards() { find "$W/shards" -name '*.shard' 2>/dev/null | sort; }
cli() { "$W/coret-tui" --model "$W/base" --device "$DEVICE" $EXTRA "$@"; }
left() { echo $((DEADLINE - $(date +%s))); }

# A stage's results as $OUT/STAGE.tar.gz ($OUT keeps at most 8 files of 16 MiB each): logs,
# summaries, the f16 adapters; not the f32 training state, checkpoints or merged weights.
collect() { # STAGE
  [ -n "${OUT:-}" ] || return 0
  cp "$W/plan.log" "$OUT/plan.log"
  [ -e "$W/res/$1" ] || return 0
  (cd "$W/res" && tar czf "$OUT/$1.tar.gz.tmp" --exclude='checkpoint*' --exclude='model.safetensors' \
    --exclude='lora.safetensors' --exclude='coret-lora-step*' "$1" $(ls -d "$1.log" 2>/dev/null)) &&
    mv "$OUT/$1.tar.gz.tmp" "$OUT/$1.tar.gz"
  log "collected $1: $(du -h "$OUT/$1.tar.gz" | cut -f1)"
}

# train NAME FLAGS...: one training run, resumable, stopped (with a checkpoint) at the deadline.
train() {
  local name=$1; shift
  local out=$W/res/$name
  [ -f "$out/done" ] && return 0
  local first rest
  first=$(shards | head -1)
  rest=$(shards | tail -n +2 | paste -sd, -)
  local -a own=("$@")
  if [ -f "$out/checkpoint/state.json" ] || [ -f "$out/checkpoint.old/state.json" ]; then
    # A resumed run's adapters are its checkpoint's (--lora-init and --resume conflict).
    local i
    own=()
    for ((i = 1; i <= $#; i++)); do
      if [ "${!i}" = --lora-init ]; then i=$((i + 1)); else own+=("${!i}"); fi
    done
    own+=(--resume)
  fi
  # lr 5e-4 unless the run names its own (a flag given twice is a usage error).
  local lr=(--lr 5e-4)
  [[ " ${own[*]} " != *" --lr "* ]] || lr=()
  local -a flags=(--train "$first" ${rest:+--more-shards "$rest"} --output "$out" --batch "$BATCH"
    --negatives "$NEGATIVES" --epochs 1 --grad-slice "$GRAD_SLICE" --seed 0 "${lr[@]}" "${own[@]}")
  # The number of updates is fixed at the run's start (a resumed run must keep its plan).
  if [ ! -f "$out/steps" ]; then
    mkdir -p "$out"
    # The device time left now (a later stage starts with less), less its evaluation; a run
    # that shares it with SHARE - 1 later runs (and their evaluations) takes its part.
    local share=${SHARE:-1}
    local budget=$(((TOTAL_LEFT - ($(date +%s) - CALL_START) - MARGIN - share * EVAL_SECONDS) / share))
    echo "${MAX_STEPS:-$((budget * RATE / BATCH))}" > "$out/steps"
  fi
  local steps; steps=$(cat "$out/steps")
  local t=$(($(left) - EVAL_SECONDS))
  if [ "$t" -le 30 ]; then log "$name: no time left this call (${t}s)"; return 1; fi
  log "$name: training (at most $steps updates, ${t}s this call)"
  local rc=0
  timeout -s INT -k 20 "$t" "$W/coret-tui" --model "$W/base" --device "$DEVICE" $EXTRA "${flags[@]}" \
    --max-steps "$steps" >> "$W/res/$name.log" 2>&1 || rc=$?
  tail -3 "$W/res/$name.log" >&2
  if [ $rc -eq 0 ]; then touch "$out/done"; log "$name: done"; else log "$name: stopped ($rc), resumes next call"; fi
  collect "$name"
  [ $rc -eq 0 ]
}

evaluate() { # NAME: the trained model on the 51
  local name=$1 out=$W/res/eval-$1
  [ -f "$out/summary.json" ] && return 0
  [ -f "$W/res/$name/done" ] || return 1
  local weights=$W/res/$name/coret-lora.safetensors
  [ -f "$weights" ] || weights=$W/res/$name/checkpoint/coret-lora.safetensors
  log "eval $name"
  cli --precision f32 --weights "$weights" --eval "$W/dev/dev51.jsonl" --repos "$W/dev/pack-ns" \
    --retriever dense,hybrid --cache-dir "$W/cache" --out "$out" > "$out.log" 2>&1 || { log "eval $name failed"; tail -5 "$out.log" >&2; }
  tail -12 "$out.log" >&2
  collect "eval-$name"
}

# The multi-language dev set (the plan carries devm when prepared): one model, query-first 200.
evaluate_multi() { # NAME
  local name=$1 out=$W/res/evalm-$1
  [ -f "$out/summary.json" ] && return 0
  [ -f "$W/res/$name/done" ] && [ -f "$W/devm/multi.jsonl" ] || return 0
  if [ $(($(left) - 2 * EVAL_SECONDS)) -le 0 ]; then log "evalm $name: skipped ($(left)s left)"; return 0; fi
  log "evalm $name"
  timeout -k 10 $(($(left) - 10)) "$W/coret-tui" --model "$W/base" --device "$DEVICE" $EXTRA --precision f32 \
    --weights "$W/res/$name/coret-lora.safetensors" --eval "$W/devm/multi.jsonl" --repos "$W/devm/pack-multi" \
    --query-first 200 --retriever bm25,dense,hybrid --cache-dir "$W/cache" --out "$out" > "$out.log" 2>&1 ||
    log "evalm $name failed or stopped"
  tail -12 "$out.log" >&2
  collect "evalm-$name"
}

# The multi plan: a cold run (the pretrained model) and a warm one (the shipped adapters).
run_multi_stages() {
  local -a cold=(enc --lora-rank 32) warm=(encw --lora-rank 32 --lora-init "$WARM_INIT" --lr 2e-4)
  local -a first=("${cold[@]}") second=("${warm[@]}")
  [ "$MULTI_FIRST" != warm ] || { first=("${warm[@]}"); second=("${cold[@]}"); }
  SHARE=2 train "${first[@]}" || return 0
  evaluate "${first[0]}"
  train "${second[@]}" || return 0
  evaluate "${second[0]}"
  evaluate_multi "${first[0]}"
  evaluate_multi "${second[0]}"
}

run_stages() {
  mkdir -p "$W/res"
  if [ "$(awk '{ print $1 }' "$W/manifest")" = multi ]; then run_multi_stages; return; fi
  train enc --lora-rank 32 || return 0
  evaluate enc
  # b: rank 64, only if a run like a's and its evaluation fit what is left of this call.
  local took; took=$(grep -o '"seconds":[0-9.]*' "$W/res/enc/train-log.jsonl" 2>/dev/null |
    cut -d: -f2 | awk '{ s += $1 } END { printf "%d", s }')
  if [ $(($(left) - EVAL_SECONDS)) -gt $((${took:-999999} * 5 / 4)) ]; then
    train enc64 --lora-rank 64 && evaluate enc64
  else
    log "enc64: skipped (a took ${took:-?}s; $(left)s left)"
  fi
  if [ $(($(left) - EVAL_SECONDS)) -gt $((${took:-999999} / 2)) ]; then
    train rerank --train-reranker --lora-rank 32 || true
  else
    log "rerank: skipped ($(left)s left)"
  fi
}

call() { # N LEFT
  local n=$1
  TOTAL_LEFT=$2
  local now; now=$(date +%s)
  CALL_START=$now
  local this=$CALL_LIMIT
  [ "$TOTAL_LEFT" -lt "$this" ] && this=$TOTAL_LEFT
  DEADLINE=$((now + this - MARGIN))
  mkdir -p "$W"
  unpack "$n"
  if ! ready; then
    log "call $n: waiting for the next upload"
    return 0
  fi
  [ "$DEVICE" = cuda ] && source "$ROOT/scripts/gpu/env.sh" >/dev/null 2>&1 || true
  run_stages
  [ -z "${OUT:-}" ] || cp "$W/plan.log" "$OUT/plan.log"
}

rehearse() { bash "$ROOT/scripts/gpu/rehearse.sh"; }

case ${1:-} in
  --pack) pack "${2:?--pack PLAN ($PLANS)}" ;;
  --call) [ "${3:-}" = --left ] || { echo "usage: plan.sh --call N --left SECONDS" >&2; exit 2; }
    call "$2" "$4" ;;
  --rehearse) rehearse ;;
  --status) status ;;
  *) sed -n '2,25p' "$0"; exit 2 ;;
esac
