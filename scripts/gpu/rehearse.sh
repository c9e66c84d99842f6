#!/usr/bin/env bash
# `plan.sh --rehearse`: the GPU plan end to end on this CPU, so that it never rots between
# leases. A tiny repository with a mined history stands in for the mirrors, train-prs and the
# dev set; prepare.sh makes every input (the CPU binary goes up instead of the CUDA one),
# plan.sh packs them into uploads small enough that there are several, and each call runs as
# the GPU machine would run it (W, OUT, a deadline), training a few updates with --device cpu.
# It fails unless the last call's results.tar.gz holds the adapters, the training log and the
# evaluation's summary.
#
# CORET_TUI: the binary (default target/release/coret-tui); CORET_MODEL: the model (the test
# suite's tiny one; default the real one). KEEP=1 keeps the scratch folder.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${CORET_TUI:-$ROOT/target/release/coret-tui}
[ -x "$BIN" ] || { echo "rehearse: no binary at $BIN (cargo build --release, or set CORET_TUI)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/coret-rehearse.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
say() { echo "rehearse: $*" >&2; }

# A repository whose every commit fixes one function, with a message long enough to keep.
repo=$T/src/widgets
mkdir -p "$repo/widgets"
g() { git -C "$repo" -c user.name=R -c user.email=r@example.com "$@"; }
g init -q
# Each total's doc sentence its own (the doc miner keeps one pair per masked sentence).
declare -A desc=([cart]="basket" [price]="quote" [stock]="warehouse shelf")
for m in cart price stock; do
  cat > "$repo/widgets/$m.py" <<EOF
"""The $m module."""


def ${m}_total(items):
    """Adds up what every line of the ${desc[$m]} costs, before any discount."""
    return sum(i.amount for i in items)


def ${m}_name(item):
    return item.name.strip()


class ${m^}Store:
    def add(self, item):
        self.items.append(item)

    def remove(self, item):
        self.items.remove(item)
EOF
done
g add -A && g commit -q -m "Initial import"
n=0
for m in cart price stock cart price stock cart price; do
  n=$((n + 1))
  case $((n % 3)) in
    0) sed -i "s/return sum(i.amount\(.*\) for i in items)/return sum(i.amount\1 * $n for i in items)/" "$repo/widgets/$m.py"
       what="${m}_total() counted each amount once where the multiplier $n applies" ;;
    1) sed -i "s/return item.name.strip()\(.*\)$/return item.name.strip()\1[:$((n + 10))]/" "$repo/widgets/$m.py"
       what="${m}_name() returned names longer than the $((n + 10)) characters the labels hold" ;;
    2) sed -i "s/self.items.append(item)\(.*\)$/self.items.append(item)\1  # $n/" "$repo/widgets/$m.py"
       what="${m^}Store.add() must keep the order of insertion for item batch $n"; ;;
  esac
  g commit -q -am "Fix $what (#$n)

The $m widgets misbehaved when the store held more than one item: $what, so the totals and
labels shown to users were wrong after the first edit. This fixes it and keeps the old API."
done
mkdir -p "$T/mirrors/acme+widgets"
git clone -q --bare "$repo" "$T/mirrors/acme+widgets/repo"

# The mined history stands in for train-prs and the dev set alike.
mkdir -p "$T/shared"
"$BIN" --mine "$T/mirrors/acme+widgets/repo" --repo-name acme/widgets --mine-out "$T/shared/train-prs.jsonl.gz" 2> "$T/mine.log" ||
  { cat "$T/mine.log" >&2; exit 1; }
gzip -dc "$T/shared/train-prs.jsonl.gz" > "$T/shared/swebench-lite-dev.jsonl"
say "$(wc -l < "$T/shared/swebench-lite-dev.jsonl") instances mined from the rehearsal repository"
printf '# repo\tc\tm\tm100\tm300\tm600\tpy\tseen\tkept\nacme/widgets\t9\t0\t0\t0\t0\t0\t9\t8\n' > "$T/repos.tsv"

export STORE=$T/store MIRRORS=$T/mirrors SHARED=$T/shared REPOS_TSV=$T/repos.tsv CORET_TUI=$BIN GPU_BIN=$BIN
export TRAIN_REPOS=acme/widgets TRAIN_SLICES="--per-repo 3|--skip-newest 3 --per-repo 2|--skip-newest 5 --per-repo 2|--skip-newest 7 --per-repo 9"
export PER_REPO=8 MINE_ARGS="--max-commits 100"
say "prepare"
"$ROOT/scripts/gpu/prepare.sh" bin model dev trainprs mined5k > "$T/prepare.log" 2>&1 || { cat "$T/prepare.log" >&2; exit 1; }
"$ROOT/scripts/gpu/prepare.sh" --status | tee "$T/status.txt" >&2
grep -q '5k: not ready' "$T/status.txt" # 8 mined examples are not 5,000: the status must say so
# A shard made by other code than today's is stale: the status says so and no plan carries it.
cp "$STORE/stamps/shards/train2" "$T/train2.stamp" && echo other-code > "$STORE/stamps/shards/train2"
stale=$("$ROOT/scripts/gpu/prepare.sh" --status 2> /dev/null)
grep -q 'train2: stale' <<< "$stale" || { say "a stale shard not shown"; exit 1; }
if "$ROOT/scripts/gpu/plan.sh" --pack trainprs > /dev/null 2>&1; then say "a stale shard packed"; exit 1; fi
cp "$T/train2.stamp" "$STORE/stamps/shards/train2"
# Packing refuses a plan short of its examples; the rehearsal's 5k is its 8.
if "$ROOT/scripts/gpu/plan.sh" --pack 5k > /dev/null 2>&1; then say "a plan short of examples packed"; exit 1; fi
export PLAN_5K=8
# Uploads small enough that the plan needs several (the binary and each model half alone).
export UPLOAD_BYTES=$(($(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb | tail -1 | cut -f1) + 4 * 1048576))
say "pack"
"$ROOT/scripts/gpu/plan.sh" --pack 5k | tee "$T/pack.txt" >&2
m=$(grep -c '^call ' "$T/pack.txt")
[ "$m" -ge 2 ] || { say "expected several uploads, got $m"; exit 1; }

# The calls as the GPU machine runs them: a fresh OUT each, W kept between them.
export W=$T/w DEVICE=cpu MAX_STEPS=2 BATCH=4 NEGATIVES=4 GRAD_SLICE=8 EVAL_SECONDS=20 EXTRA="--batch-size 16"
for c in $(seq 1 "$m"); do
  export OUT=$T/out/$c
  mkdir -p "$OUT"
  say "call $c of $m"
  "$ROOT/scripts/gpu/plan.sh" --call "$c" --left 900 >> "$T/calls.log" 2>&1 || { cat "$T/calls.log" >&2; exit 1; }
  # Nothing is trained before the last upload is there (it may carry shards).
  if [ "$c" -lt "$m" ] && [ -e "$W/res/enc" ]; then cat "$T/calls.log" >&2; say "trained before upload $m"; exit 1; fi
done
fail() { cat "$T/calls.log" >&2; say "$*"; exit 1; }
o=$T/out/$m
[ -f "$o/plan.log" ] || fail "no plan.log came back"
[ "$(find "$o" -type f | wc -l)" -le 8 ] || fail "more than the 8 files a call brings back"
for f in enc:enc/coret-lora.safetensors enc:enc/train-log.jsonl eval-enc:eval-enc/summary.json; do
  # The listing first: grep -q stopping early would fail tar, and the pipeline with it.
  listing=$(tar tzf "$o/${f%%:*}.tar.gz" 2>/dev/null || true)
  grep -qx "${f#*:}" <<< "$listing" || fail "${f%%:*}.tar.gz lacks ${f#*:}"
done
for f in "$o"/*; do
  [ "$(stat -c %s "$f")" -le 16777216 ] || fail "$f is over the 16 MiB a returned file may hold"
done

# The multi plan (#60): the same repository listed as a multi-language one; a cold run and a
# warm one, which starts from the cold run above (the tiny model's adapters stand in for the
# shipped ones, which belong to another base).
printf '# repo\tlanguage\nacme/widgets\trust\n' > "$T/repos-multi.tsv"
export MULTI_TSV=$T/repos-multi.tsv MULTI_FAMILIES=rust MULTI_PER_REPO=8 WARM_INIT=$W/res/enc/coret-lora.safetensors
"$ROOT/scripts/gpu/prepare.sh" multi >> "$T/prepare.log" 2>&1 || { cat "$T/prepare.log" >&2; exit 1; }
"$ROOT/scripts/gpu/prepare.sh" --status 2> /dev/null | tee "$T/status-multi.txt" >&2
grep -q 'multi: not ready (rust 8 of 300)' "$T/status-multi.txt" || { say "the multi plan's gap not shown"; exit 1; }
# Doc-comment pairs (#60 item 2): the three documented totals, a shard, carried by the multi plan.
"$ROOT/scripts/gpu/prepare.sh" docs >> "$T/prepare.log" 2>&1 || { cat "$T/prepare.log" >&2; exit 1; }
# The status first: grep -q stopping early would fail it, and the pipeline with it.
docs_status=$("$ROOT/scripts/gpu/prepare.sh" --status 2> /dev/null)
grep -q 'docs: 1 repositories mined, 1 shards (3 pairs' <<< "$docs_status" ||
  { cat "$T/prepare.log" >&2; echo "$docs_status" >&2; say "no doc-pair shard of 3 pairs"; exit 1; }
if "$ROOT/scripts/gpu/plan.sh" --pack multi > /dev/null 2>&1; then say "a multi plan short of examples packed"; exit 1; fi
export MULTI_PLAN_MIN=8
"$ROOT/scripts/gpu/plan.sh" --pack multi | tee "$T/pack-multi.txt" >&2
mm=$(grep -c '^call ' "$T/pack-multi.txt")
[ -n "$(find "$STORE/up" -path '*docs/acme+widgets.shard')" ] || { say "the multi plan does not carry the doc pairs"; exit 1; }
wm=$T/wm
for c in $(seq 1 "$mm"); do
  export OUT=$T/outm/$c
  mkdir -p "$OUT"
  say "multi call $c of $mm"
  W=$wm "$ROOT/scripts/gpu/plan.sh" --call "$c" --left 900 >> "$T/calls.log" 2>&1 || fail "multi call $c failed"
done
for f in enc:enc/coret-lora.safetensors encw:encw/coret-lora.safetensors eval-encw:eval-encw/summary.json; do
  listing=$(tar tzf "$T/outm/$mm/${f%%:*}.tar.gz" 2>/dev/null || true)
  grep -qx "${f#*:}" <<< "$listing" || fail "multi: ${f%%:*}.tar.gz lacks ${f#*:}"
done
grep -q 'LoRA adapters start from' "$wm/res/encw.log" || fail "multi: the warm run did not start from the adapters"
say "passed: $m uploads; stages done: $(grep -o 'plan: [a-z0-9]*: done' "$W/plan.log" | cut -d' ' -f2 | tr -d : | paste -sd' ');" \
  "returned: $(cd "$o" && du -h -- * | awk '{ printf "%s %s, ", $2, $1 }')" \
  "multi: $mm uploads; stages done: $(grep -o 'plan: [a-z0-9]*: done' "$wm/plan.log" | cut -d' ' -f2 | tr -d : | paste -sd' ')"
