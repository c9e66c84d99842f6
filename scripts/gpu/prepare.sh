#!/usr/bin/env bash
# Everything a GPU run needs, by one resumable command (#54). Steps, in order of value:
#
#   bin       the stripped CUDA binary for the current src/ (xz)
#   model     the base model, f32 exact, xz in two halves (one per upload)
#   dev       the 51 tuning instances and their slim repositories (pack-ns)
#   trainprs  train-prs' four shards (models/README.md's recipe, 5,382 examples)
#   train1    train-prs' first slice alone (~1,200 examples, ~10 min): the multi plan's least
#   mine      commit history of every mirrored repository of scripts/mine/repos.tsv
#   mined5k   mined commits, a shard per repository (most kept first), until 5,000 examples
#   mined15k  … until 15,000
#   minedall  … every mined repository
#   minemulti commit history of every mirrored repository of scripts/mine/repos-multi.tsv (#60:
#             Rust, Go, JavaScript, TypeScript, Java, C, C++), into STORE/mined-multi
#   multi     a shard per multi-language repository (STORE/shards/multi), round robin over the
#             languages, until each family (rust go js java c: JS with TS, C with C++) holds
#             MULTI_FAMILY examples (1,000)
#   multiall  … every repository of the list
#   minedocs  doc-comment pairs (#60 item 2) of every repository of repos-multi.tsv, at HEAD,
#             into STORE/mined-docs (--mine-docs --max-pairs DOCS_PAIRS, 400)
#   docs      a doc-pair shard per repository (STORE/shards/docs), round robin like multi, until
#             each family holds DOCS_FAMILY pairs (1,000)
#   docsall   … every repository of the list
#
#   scripts/gpu/prepare.sh [STEP...]    # no step: all of them, skipping what is up to date
#   scripts/gpu/prepare.sh --status     # what is ready, its size, uploads per plan
#   scripts/gpu/prepare.sh --stale      # prepared shards that today's code would make otherwise
#
# A step's outputs are up to date when its stamp holds the hash of what made them (the code it
# ran, its data, its flags); each output is written under a temporary name and renamed, so a run
# stopped anywhere loses at most the output in progress. Run it in the background whenever
# --status shows a gap: `nohup scripts/gpu/prepare.sh > .gpu/prepare.log 2>&1 &`.
#
# Where: STORE (.gpu in the checkout, git-ignored: `run`'s carry takes repository paths),
# MIRRORS (bare repositories as `fetch` lays them out), SHARED (../shared/data).
# Knobs: PER_REPO (mined instances per repository, 400), DENSE_NEGATIVES (0: see README.md),
# MINE_ARGS (--max-commits 2000); MULTI_MINE_ARGS (--max-commits 800), MULTI_PER_REPO (100
# instances per repository of Rust, Go and Java; half that for the two-language families). Two cores: run two lanes at once, e.g. `prepare.sh trainprs
# mined15k` beside `prepare.sh mined15k`: a shard another lane is making is skipped (its lock).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
STORE=${STORE:-$ROOT/.gpu}
SHARED=${SHARED:-$ROOT/../shared/data}
CUDA_TARGET=${CUDA_TARGET:-/work/target-cuda}
PER_REPO=${PER_REPO:-400}
DENSE_NEGATIVES=${DENSE_NEGATIVES:-0}
MINE_ARGS=${MINE_ARGS:---max-commits 2000}
MULTI_MINE_ARGS=${MULTI_MINE_ARGS:---max-commits 800}
MULTI_PER_REPO=${MULTI_PER_REPO:-100}
MULTI_FAMILY=${MULTI_FAMILY:-1000}
DOCS_PAIRS=${DOCS_PAIRS:-400}
DOCS_PER_REPO=${DOCS_PER_REPO:-200}
DOCS_FAMILY=${DOCS_FAMILY:-1000}
# The binary that prepares (CORET_TUI: a given one, not rebuilt) and the one that goes up
# (GPU_BIN: a given one instead of the CUDA build; the rehearsal's).
BIN=${CORET_TUI:-$ROOT/target/release/coret-tui}
GPU_BIN=${GPU_BIN:-}
# train-prs' four disjoint slices of each repository's history (models/README.md).
TRAIN_SLICES=${TRAIN_SLICES:---per-repo 400|--skip-newest 400 --per-repo 300|--skip-newest 700 --per-repo 800|--skip-newest 1500 --per-repo 1500}
source "$ROOT/scripts/gpu/lib.sh"

# The code a shard depends on: how chunks are cut and laid out, how examples are chosen, and
# the file format's version (its magic line: a reader's compatible change keeps the shards).
# SHARD_COMMIT: that commit's code instead of the checkout's, e.g. to pack shards a release
# binary of an older main made (.gpu/MADE-BY-*.txt names it) after src/chunk moved on.
# A file that moved keeps hashing under its old path (MOVED: new=old), so that the move alone
# leaves every stamp fresh.
SHARD_FILES="src/train/prepare.rs src/train/mine.rs src/chunk src/model/tokenize.rs src/rank/dense_retriever.rs src/eval/snapshot.rs"
MOVED="src/rank/dense_retriever.rs=src/semantic.rs"
shard_code() {
  local m
  if [ -n "${SHARD_COMMIT:-}" ]; then
    local d f; d=$(mktemp -d)
    for f in $SHARD_FILES src/train/shard.rs; do
      git -C "$ROOT" cat-file -e "$SHARD_COMMIT:$f" 2>/dev/null || for m in $MOVED; do
        [ "${m%%=*}" = "$f" ] && f=${m#*=}
      done
      git -C "$ROOT" archive "$SHARD_COMMIT" "$f" | tar -x -C "$d"
    done
    for m in $MOVED; do
      [ -e "$d/${m#*=}" ] && mkdir -p "$(dirname "$d/${m%%=*}")" && mv "$d/${m#*=}" "$d/${m%%=*}"
    done
    (cd "$d" && ROOT=$d SHARD_COMMIT='' shard_code)
    rm -rf "$d"
    return
  fi
  local renames=()
  for m in $MOVED; do renames+=(-e "s#  ${m%%=*}\$#  ${m#*=}#"); done
  # shellcheck disable=SC2086
  { file_sums $SHARD_FILES | sed "${renames[@]}" | sha; grep '^const MAGIC:' src/train/shard.rs; } | sha
}
model_dir() { echo "${CORET_MODEL:-${CORET_DATA_DIR:-$HOME/.local/share/coret-tui}/models/all-MiniLM-L6-v2}"; }

cpu_binary() { # the preparing binary must be the current code's
  [ -n "${CPU_BUILT:-}${CORET_TUI:-}" ] && return
  nice cargo build --release --quiet
  CPU_BUILT=1
}

step_bin() {
  local h; h=$(hash_files src Cargo.toml Cargo.lock)
  [ -z "$GPU_BIN" ] || h=$(hash_files "$GPU_BIN")
  fresh bin "$h" bin/coret-tui.xz && return
  mkdir -p "$STORE/bin"
  if [ -n "$GPU_BIN" ]; then
    strip -o "$STORE/bin/coret-tui" "$GPU_BIN"
    xz -1 -T1 -c "$STORE/bin/coret-tui" > "$STORE/bin/coret-tui.xz.tmp" && rm "$STORE/bin/coret-tui"
    mv "$STORE/bin/coret-tui.xz.tmp" "$STORE/bin/coret-tui.xz"
    stamp bin "$h"
    return
  fi
  cargo fetch --quiet
  eval "$(../shared/cuda/toolkit.sh)"
  # candle 0.11 links NVRTC, which the toolkit's wheels leave out.
  "$HOME/.cache/coret-cuda13/venv/bin/pip" install -q nvidia-cuda-nvrtc==13.0.88
  CARGO_TARGET_DIR=$CUDA_TARGET nice cargo build --release --features cuda
  mkdir -p "$STORE/bin"
  strip -o "$STORE/bin/coret-tui" "$CUDA_TARGET/release/coret-tui"
  xz -6 -T1 -c "$STORE/bin/coret-tui" > "$STORE/bin/coret-tui.xz.tmp"
  rm "$STORE/bin/coret-tui" && mv "$STORE/bin/coret-tui.xz.tmp" "$STORE/bin/coret-tui.xz"
  stamp bin "$h"
}

step_model() {
  cpu_binary
  local dir; dir=$(model_dir)
  [ -f "$dir/model.safetensors" ] || "$BIN" --fetch-model
  local h; h=$(hash_files "$dir/model.safetensors" "$dir/config.json" "$dir/tokenizer.json")
  fresh model "$h" model/model.xz.00 model/model.xz.01 && return
  mkdir -p "$STORE/model" && rm -f "$STORE"/model/model.xz.*
  (cd "$dir" && sha256sum model.safetensors) > "$STORE/model/model.sha256"
  cp "$dir/config.json" "$dir/tokenizer.json" "$STORE/model/"
  # Exact f32: the adapters record the base weights' hash, and bf16 would be another base.
  xz -6 -T1 -c "$dir/model.safetensors" > "$STORE/model/model.xz.tmp"
  split -n 2 -d "$STORE/model/model.xz.tmp" "$STORE/model/model.xz."
  rm "$STORE/model/model.xz.tmp"
  stamp model "$h"
}

step_dev() {
  local h; h=$(hash_files "$SHARED/swebench-lite-dev.jsonl" scripts/gpu/make_pack.py)
  fresh dev "$h" dev/dev51.jsonl dev/pack-ns && return
  rm -rf "$STORE/dev.tmp" && mkdir -p "$STORE/dev.tmp"
  grep -v '"sympy/sympy"' "$SHARED/swebench-lite-dev.jsonl" > "$STORE/dev.tmp/dev51.jsonl"
  python3 scripts/gpu/make_pack.py "$STORE/dev.tmp/dev51.jsonl" "$MIRRORS" "$STORE/dev.tmp/pack-ns"
  rm -rf "$STORE/dev" && mv "$STORE/dev.tmp" "$STORE/dev"
  stamp dev "$h"
}

# The flags every shard is made with, then a shard's own.
COMMON_FLAGS="--repos $MIRRORS --min-query-chars 100 --negatives 16 --bm25-negatives 8 --query-max-len 256"
# A shard's stamp: the hash of its flags (its own: the arguments), the code and the tokenizer.
shard_hash() {
  echo "$COMMON_FLAGS $* ${SHARD_CODE:=$(shard_code)} ${TOKENIZER_HASH:=$(hash_files "$(model_dir)/tokenizer.json")}" | sha
}
train_flags() { # N: the flags of train-prs' slice N
  local n=0 slice
  while IFS= read -r -d '|' slice; do
    n=$((n + 1))
    [ "$n" = "$1" ] && echo "--train $SHARED/train-prs.jsonl.gz --train-repos $TRAIN_REPOS $slice"
  done <<< "$TRAIN_SLICES|"
  return 0
}
mined_flags() { # NAME (owner+repo)
  echo "--train $STORE/mined/$1.jsonl.gz --per-repo $PER_REPO --dense-negatives $DENSE_NEGATIVES"
}
# A multi-language repository's shard: half as many instances for a family of two languages, so
# that each family draws about as many from its list.
multi_flags() { # NAME (owner+repo) LANGUAGE
  local per=$MULTI_PER_REPO
  case $2 in javascript | typescript | c | cpp) per=$((per / 2)) ;; esac
  echo "--train $STORE/mined-multi/$1.jsonl.gz --per-repo $per --dense-negatives $DENSE_NEGATIVES"
}
# A doc-pair shard: a doc sentence is one line (24–300 characters once masked), not an issue, so
# the fixes' --min-query-chars 100 (COMMON_FLAGS) gives way to 20 (see shard()).
docs_flags() { # NAME (owner+repo)
  echo "--train $STORE/mined-docs/$1.jsonl.gz --per-repo $DOCS_PER_REPO --dense-negatives $DENSE_NEGATIVES --min-query-chars 20"
}
multi_lang() { # NAME (owner+repo): its language in repos-multi.tsv
  awk -F'\t' -v r="${1/+//}" '$1 == r { print $2; exit }' "$MULTI_TSV"
}

# Every prepared shard whose stamp is not what today's code, data and flags would make (a
# change to the code a shard depends on, or a stopped run's leftovers): such a shard is
# remade by its step, and no plan carries it meanwhile.
stale_shards() {
  local f name flags
  SHARD_CODE=$(shard_code) TOKENIZER_HASH=$(hash_files "$(model_dir)/tokenizer.json")
  for f in "$STORE"/shards/train*.shard "$STORE"/shards/mined/*.shard "$STORE"/shards/multi/*.shard "$STORE"/shards/docs/*.shard; do
    [ -f "$f" ] || continue
    name=${f#"$STORE"/shards/} && name=${name%.shard}
    case $name in
      train*) flags=$(train_flags "${name#train}") ;;
      multi/*) flags=$(multi_flags "${name#multi/}" "$(multi_lang "${name#multi/}")") ;;
      docs/*) flags=$(docs_flags "${name#docs/}") ;;
      *) flags=$(mined_flags "${name#mined/}") ;;
    esac
    [ "$(cat "$STORE/stamps/shards/$name" 2>/dev/null)" = "$(shard_hash "$flags")" ] || echo "shards/$name.shard"
  done
  return 0
}

# One shard: NAME, then its own flags.
shard() {
  local name=$1; shift
  local common=$COMMON_FLAGS
  # A shard that sets its own --min-query-chars (docs_flags) runs with it alone; the stamp
  # still hashes COMMON_FLAGS and the shard's own, as for every shard.
  case " $* " in *" --min-query-chars "*) common=${common/--min-query-chars 100 /} ;; esac
  local flags="$common $*"
  local h; h=$(shard_hash "$*")
  fresh "shards/$name" "$h" "shards/$name.shard" && return
  mkdir -p "$STORE/shards/$(dirname "$name")" "$STORE/logs/$(dirname "$name")"
  # Another lane making this shard: leave it to that lane (return 3, "busy") and go on.
  exec {lock}> "$STORE/shards/$name.lock"
  if ! flock -n "$lock"; then
    echo "  shards/$name: another lane is making it" >&2
    exec {lock}>&-
    return 3
  fi
  if fresh "shards/$name" "$h" "shards/$name.shard"; then exec {lock}>&-; return; fi
  # shellcheck disable=SC2086 # flags are a list
  nice "$BIN" $flags --prepare-shard "$STORE/shards/$name.shard" > "$STORE/logs/$name.log" 2>&1 || {
    echo "prepare.sh: shard $name failed (see $STORE/logs/$name.log)" >&2; return 1; }
  grep -o 'wrote [0-9]* examples' "$STORE/logs/$name.log" | tr -dc 0-9 > "$STORE/shards/$name.count"
  # No examples (e.g. no mirror of its repositories): nothing to carry, and not up to date.
  if [ "$(cat "$STORE/shards/$name.count")" = 0 ]; then
    rm -f "$STORE/shards/$name.shard" "$STORE/shards/$name.count"
    echo "prepare.sh: shard $name has no examples (see $STORE/logs/$name.log)" >&2
    exec {lock}>&-
    return 1
  fi
  stamp "shards/$name" "$h"
  exec {lock}>&-
}

step_trainprs() {
  cpu_binary
  local n
  for n in 1 2 3 4; do
    shard "train$n" "$(train_flags $n)" || [ $? = 3 ]
  done
}

step_train1() {
  cpu_binary
  shard train1 "$(train_flags 1)" || [ $? = 3 ]
}

# One repository's commit history (mine-all.sh skips it once its file exists).
mine_one() {
  mkdir -p "$STORE/mined"
  [ -f "$STORE/mined/${1/\//+}.jsonl.gz" ] && return
  local list; list=$(mktemp "$STORE/mined/list.XXXXXX") # its own: lanes may mine at once
  echo "$1" > "$list"
  MINE_ARGS=$MINE_ARGS nice scripts/mine/mine-all.sh "$list" "$MIRRORS" "$STORE/mined" "$BIN" || true
  rm -f "$list"
}

step_mine() {
  cpu_binary
  local repo
  mining_order | while read -r repo; do mine_one "$repo"; done
}

# Mined shards, one per repository in mining order, until they hold TARGET examples.
mined_until() {
  local target=$1 have=0 repo name
  cpu_binary
  while read -r repo; do
    [ "$have" -ge "$target" ] && break
    name=${repo/\//+}
    mine_one "$repo"
    [ -f "$STORE/mined/$name.jsonl.gz" ] || continue
    local made=0
    shard "mined/$name" "$(mined_flags "$name")" || made=$?
    case $made in
      0) have=$((have + $(cat "$STORE/shards/mined/$name.count"))) ;;
      3) ;; # the other lane's: counted when it is done, by whichever lane runs next
      *) return "$made" ;;
    esac
  done < <(mining_order)
  echo "mined shards: $have examples (target $target)" >&2
}

# One multi-language repository's history (skipped once its file exists; the miner writes it
# atomically). A repository that cannot be read leaves no file and a line in summary.log.
mine_multi_one() {
  mkdir -p "$STORE/mined-multi"
  [ -f "$STORE/mined-multi/${1/\//+}.jsonl.gz" ] && return
  # Another lane mining it: leave it to that lane (its shard too) and go on.
  local lock
  exec {lock}> "$STORE/mined-multi/${1/\//+}.lock"
  if ! flock -n "$lock"; then
    echo "  mined-multi/${1/\//+}: another lane is mining it" >&2
    exec {lock}>&-
    return
  fi
  local list; list=$(mktemp "$STORE/mined-multi/list.XXXXXX")
  echo "$1" > "$list"
  MINE_ARGS=$MULTI_MINE_ARGS nice scripts/mine/mine-all.sh "$list" "$MIRRORS" "$STORE/mined-multi" "$BIN" || true
  rm -f "$list"
  exec {lock}>&-
}

step_minemulti() {
  cpu_binary
  local repo lang
  multi_order | while read -r repo lang; do mine_multi_one "$repo"; done
}

# Doc-comment pairs of one repository's HEAD (skipped once its file exists; written atomically).
mine_docs_one() {
  mkdir -p "$STORE/mined-docs"
  [ -f "$STORE/mined-docs/${1/\//+}.jsonl.gz" ] && return
  local list; list=$(mktemp "$STORE/mined-docs/list.XXXXXX")
  echo "$1" > "$list"
  MINE_ARGS="--mine-docs --max-pairs $DOCS_PAIRS" nice scripts/mine/mine-all.sh "$list" "$MIRRORS" "$STORE/mined-docs" "$BIN" || true
  rm -f "$list"
}

step_minedocs() {
  cpu_binary
  local repo lang
  multi_order | while read -r repo lang; do mine_docs_one "$repo"; done
}

# Shards of KIND in multi_order until every family holds TARGET examples (a family that has
# them is passed over): multi (mined fixes, from mined-multi) or docs (doc-comment pairs, from
# mined-docs). Each repository is mined first if it is not yet.
family_until() { # KIND TARGET
  local kind=$1 target=$2 repo lang name fam made flags
  declare -A have=()
  cpu_binary
  while read -r repo lang; do
    fam=$(family "$lang")
    [ "${have[$fam]:-0}" -ge "$target" ] && continue
    name=${repo/\//+}
    if [ "$kind" = docs ]; then
      mine_docs_one "$repo"
      [ -f "$STORE/mined-docs/$name.jsonl.gz" ] || continue
      flags=$(docs_flags "$name")
    else
      mine_multi_one "$repo"
      [ -f "$STORE/mined-multi/$name.jsonl.gz" ] || continue
      flags=$(multi_flags "$name" "$lang")
    fi
    made=0
    shard "$kind/$name" "$flags" || made=$?
    case $made in
      0) have[$fam]=$((${have[$fam]:-0} + $(cat "$STORE/shards/$kind/$name.count"))) ;;
      3) ;; # the other lane's: counted when it is done
      *) echo "prepare.sh: $kind/$name failed; going on" >&2 ;;
    esac
  done < <(multi_order)
  for fam in $MULTI_FAMILIES; do echo "$kind shards: $fam ${have[$fam]:-0} examples (target $target)" >&2; done
}

main() {
  mkdir -p "$STORE/stamps"
  if [ "${1:-}" = --status ]; then STALE=$(stale_shards) status; return; fi
  if [ "${1:-}" = --stale ]; then stale_shards; return; fi
  local steps=("$@")
  [ ${#steps[@]} -gt 0 ] || steps=(bin model dev trainprs mine mined5k mined15k minedall)
  for s in "${steps[@]}"; do
    echo "$(date +%T) prepare: $s" >&2
    case $s in
      bin | model | dev | trainprs | train1 | mine | minemulti | minedocs) "step_$s" ;;
      mined5k) mined_until 5000 ;;
      mined15k) mined_until 15000 ;;
      minedall) mined_until 1000000000 ;;
      multi) family_until multi "$MULTI_FAMILY" ;;
      multiall) family_until multi 1000000000 ;;
      docs) family_until docs "$DOCS_FAMILY" ;;
      docsall) family_until docs 1000000000 ;;
      *) echo "prepare.sh: unknown step $s (bin model dev trainprs train1 mine mined5k mined15k minedall minemulti multi multiall minedocs docs docsall)" >&2; exit 2 ;;
    esac
  done
  STALE=$(stale_shards) status
}

main "$@"; exit
