# Sourced by prepare.sh and plan.sh: stamps, what each plan carries, how it splits into uploads.
# Expects ROOT (the checkout) and STORE (where prepared inputs live).

# train-prs' ten repositories (models/README.md).
TRAIN_REPOS=${TRAIN_REPOS:-conan-io/conan,iterative/dvc,marshmallow-code/marshmallow,pvlib/pvlib-python,pydantic/pydantic,pylint-dev/astroid,pydicom/pydicom,sqlfluff/sqlfluff,python/mypy,getmoto/moto}
REPOS_TSV=${REPOS_TSV:-$ROOT/scripts/mine/repos.tsv}
# The multi-language repositories (#60): OWNER/NAME, then the language (rust go javascript
# typescript java c cpp), by language.
MULTI_TSV=${MULTI_TSV:-$ROOT/scripts/mine/repos-multi.tsv}
# Bare repositories as `fetch` lays them out: the mined ones, in mining order, pick a plan's shards.
MIRRORS=${MIRRORS:-/work/.mirror}
# One `run` call carries the working tree and the carried folders: 64 MiB in all.
UPLOAD_BYTES=${UPLOAD_BYTES:-67108864}

sha() { sha256sum | cut -c1-16; }

# A hash of files' contents (folders: every file under them), by path.
hash_files() { file_sums "$@" | sha; }

# `sha256sum` lines of files' contents (folders: every file under them), by path.
file_sums() {
  local p
  for p in "$@"; do
    if [ -d "$p" ]; then
      find "$p" -type f -print0 | sort -z | xargs -0 -r sha256sum
    elif [ -f "$p" ]; then
      sha256sum "$p"
    else
      echo "missing $p"
    fi
  done
}

# fresh NAME HASH OUTPUT...: whether NAME's stamp holds HASH and every output exists.
fresh() {
  local name=$1 h=$2 o
  shift 2
  [ "$(cat "$STORE/stamps/$name" 2>/dev/null)" = "$h" ] || return 1
  for o in "$@"; do [ -e "$STORE/$o" ] || return 1; done
  echo "  $name: up to date" >&2
}

stamp() {
  mkdir -p "$(dirname "$STORE/stamps/$1")"
  echo "$2" > "$STORE/stamps/$1"
}

# The mined repositories with a mirror, most instances kept first (repos.tsv's last column).
mining_order() {
  local repo
  grep -v '^#' "$REPOS_TSV" | sort -t$'\t' -k9,9nr | cut -f1 | while read -r repo; do
    [ -n "$repo" ] && [ -d "$MIRRORS/${repo/\//+}/repo" ] && echo "$repo"
  done
  return 0
}

# Mined shards in mining order until their examples reach TARGET (those prepared so far).
mined_shards() {
  local target=$1 have=0 repo f
  while read -r repo; do
    [ "$have" -ge "$target" ] && break
    f=shards/mined/${repo/\//+}
    [ -f "$STORE/$f.shard" ] && [ -f "$STORE/$f.count" ] || continue
    echo "$f.shard"
    have=$((have + $(cat "$STORE/$f.count")))
  done < <(mining_order)
  return 0
}

# A language's family: the multi plan balances its sample across families (JS with TS, C with C++).
family() {
  case $1 in
    javascript | typescript) echo js ;;
    c | cpp) echo c ;;
    *) echo "$1" ;;
  esac
}
MULTI_FAMILIES=${MULTI_FAMILIES:-rust go js java c}

# "OWNER/NAME LANGUAGE" of repos-multi.tsv's mirrored repositories, round robin over the
# languages in the list's order (each language's own order kept), so that any prefix of the
# list is balanced.
multi_order() {
  grep -v '^#' "$MULTI_TSV" | awk -F'\t' -v m="$MIRRORS" '
    NF >= 2 && $1 != "" {
      d = $1; sub("/", "+", d)
      if (system("test -d \"" m "/" d "/repo\"") != 0) next
      if (!($2 in n)) order[++langs] = $2
      list[$2, ++n[$2]] = $1
    }
    END {
      for (i = 1; ; i++) {
        more = 0
        for (l = 1; l <= langs; l++) if (i <= n[order[l]]) { print list[order[l], i], order[l]; more = 1 }
        if (!more) break
      }
    }'
}

# The multi plan's sample of shards/DIR (those prepared so far): in multi_order, a family's
# shards until it holds CAP examples.
family_sample() { # DIR CAP
  local dir=$1 cap=$2 repo lang f fam
  declare -A have=()
  while read -r repo lang; do
    fam=$(family "$lang")
    [ "${have[$fam]:-0}" -ge "$cap" ] && continue
    f=shards/$dir/${repo/\//+}
    [ -f "$STORE/$f.shard" ] && [ -f "$STORE/$f.count" ] || continue
    echo "$f.shard"
    have[$fam]=$((${have[$fam]:-0} + $(cat "$STORE/$f.count")))
  done < <(multi_order)
  return 0
}
# Mined fixes: up to MULTI_PLAN_FAMILY examples a family.
MULTI_PLAN_FAMILY=${MULTI_PLAN_FAMILY:-1000}
# The least a family must hold for the plan to be READY.
MULTI_PLAN_MIN=${MULTI_PLAN_MIN:-300}
multi_shards() { family_sample multi "$MULTI_PLAN_FAMILY"; }
# Doc-comment pairs (#60 item 2: a definition's first doc sentence, its names masked, as the
# query): up to MULTI_PLAN_DOCS a family.
MULTI_PLAN_DOCS=${MULTI_PLAN_DOCS:-400}
docs_shards() { family_sample docs "$MULTI_PLAN_DOCS"; }

# "FAMILY EXAMPLES" for the shards LISTER names (multi_shards, docs_shards) under shards/DIR
# (every family, 0 when it has none).
family_counts() {
  local lister=$1 dir=$2 repo lang f
  declare -A have=() inplan=()
  for f in $($lister); do inplan[$f]=1; done
  while read -r repo lang; do
    f=shards/$dir/${repo/\//+}.shard
    [ -n "${inplan[$f]:-}" ] || continue
    have[$(family "$lang")]=$((${have[$(family "$lang")]:-0} + $(cat "$STORE/${f%.shard}.count")))
  done < <(multi_order)
  for f in $MULTI_FAMILIES; do echo "$f ${have[$f]:-0}"; done
}
multi_family_counts() { family_counts multi_shards multi; }
docs_family_counts() { family_counts docs_shards docs; }

PLANS="trainprs 5k 15k all multi"

# What a plan carries, in the order it is needed on the GPU machine (relative to STORE).
plan_items() {
  echo bin/coret-tui.xz
  echo model/model.xz.00
  echo model/model.sha256 model/config.json model/tokenizer.json | tr ' ' '\n'
  echo model/model.xz.01
  echo dev
  local n
  if [ "$1" = multi ]; then
    # The multi-language dev set when prepared (devm: multi.jsonl, pack-multi); train-prs'
    # first slice, and the others that are prepared; then the balanced sample.
    [ ! -f "$STORE/devm/multi.jsonl" ] || echo devm
    # MULTI_TRAINPRS=0: whichever slices are prepared, none required.
    [ "${MULTI_TRAINPRS:-1}" = 0 ] || echo shards/train1.shard
    for n in 1 2 3 4; do
      [ "$n" = 1 ] && [ "${MULTI_TRAINPRS:-1}" != 0 ] && continue
      [ ! -f "$STORE/shards/train$n.shard" ] || echo "shards/train$n.shard"
    done
    multi_shards
    docs_shards
    return 0
  fi
  echo shards/train1.shard shards/train2.shard shards/train3.shard shards/train4.shard | tr ' ' '\n'
  case $1 in
    trainprs) ;;
    5k) mined_shards "$PLAN_5K" ;;
    15k) mined_shards "$PLAN_15K" ;;
    all) mined_shards 1000000000 ;;
    *) echo "unknown plan $1 ($PLANS)" >&2; return 2 ;;
  esac
}

# Examples the plan's mined shards hold.
plan_mined_examples() {
  local n=0 f
  for f in $(plan_items "$1" | grep -E '^shards/(mined|multi|docs)/'); do n=$((n + $(cat "$STORE/${f%.shard}.count"))); done
  echo "$n"
}

bytes_of() { if [ -e "$STORE/$1" ]; then du -sb "$STORE/$1" | cut -f1; fi; }
count_files() { if [ -d "$STORE/$1" ]; then find "$STORE/$1" -maxdepth 1 -name "$2" | wc -l; else echo 0; fi; }
sum_counts() { # [FOLDER under shards/: mined]
  local n=0 f
  for f in "$STORE"/shards/"${1:-mined}"/*.count; do [ -f "$f" ] && n=$((n + $(cat "$f"))); done
  echo "$n"
}

# Bytes every call carries anyway: the tracked and untracked, not ignored, files of the checkout.
tree_bytes() {
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null |
    tail -1 | cut -f1)
}

# "UPLOAD ITEM BYTES" lines: items in order, each into the first upload with room (1 MiB kept
# free for the call's own files); "0 ITEM missing" or "0 ITEM stale" (listed in STALE).
plan_uploads() {
  local room=$((UPLOAD_BYTES - $(tree_bytes) - 1048576)) item b u
  local -a used=()
  for item in $(plan_items "$1"); do
    b=$(bytes_of "$item")
    [ -n "$b" ] || { echo "0 $item missing"; continue; }
    ! grep -qxF "$item" <<< "${STALE:-}" || { echo "0 $item stale"; continue; }
    u=0
    while [ $u -lt ${#used[@]} ] && [ $((used[u] + b)) -gt $room ]; do u=$((u + 1)); done
    [ $u -lt ${#used[@]} ] || used+=(0)
    used[u]=$((used[u] + b))
    echo "$((u + 1)) $item $b"
  done
}

# The mined examples the 5k and 15k plans carry at least (the rehearsal's are fewer).
PLAN_5K=${PLAN_5K:-5000}
PLAN_15K=${PLAN_15K:-15000}

# What a plan's mined shards lack (empty when they are enough): the examples for 5k and 15k,
# a shard of every mirrored repository for all.
plan_gap() {
  local mined; mined=$(plan_mined_examples "$1")
  case $1 in
    5k) [ "$mined" -ge "$PLAN_5K" ] || echo "mined examples $mined of $PLAN_5K" ;;
    15k) [ "$mined" -ge "$PLAN_15K" ] || echo "mined examples $mined of $PLAN_15K" ;;
    all)
      local repos shards; repos=$(mining_order | wc -l); shards=$(count_files shards/mined '*.shard')
      [ "$shards" -ge "$repos" ] || echo "shards of $shards of $repos mirrored repositories" ;;
    multi)
      multi_family_counts | awk -v min="$MULTI_PLAN_MIN" '$2 < min { printf "%s%s %d of %d", sep, $1, $2, min; sep = ", " }'
      ;;
  esac
  return 0
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

status() {
  local s f n b plan missing uploads total
  echo "prepared inputs in $STORE"
  for s in bin model dev; do
    b=$(bytes_of "$s")
    if [ -f "$STORE/stamps/$s" ] && [ -n "$b" ]; then echo "  $s: ready, $(mb "$b")"; else echo "  $s: missing"; fi
  done
  local want_bin
  if [ -n "${GPU_BIN:-}" ]; then want_bin=$(hash_files "$GPU_BIN"); else want_bin=$(cd "$ROOT" && hash_files src Cargo.toml Cargo.lock); fi
  if [ -f "$STORE/stamps/bin" ] && [ "$(cat "$STORE/stamps/bin")" != "$want_bin" ]; then
    echo "  bin: stale (src/ changed since it was built; prepare.sh bin)"
  fi
  for n in 1 2 3 4; do
    f=shards/train$n
    if grep -qxF "$f.shard" <<< "${STALE:-}"; then echo "  train$n: stale (prepare.sh trainprs)"
    elif [ -f "$STORE/$f.count" ]; then echo "  train$n: $(cat "$STORE/$f.count") examples, $(mb "$(bytes_of "$f.shard")")"
    else echo "  train$n: missing"; fi
  done
  n=$(count_files shards/mined '*.count')
  echo "  mined: $(count_files mined '*.jsonl.gz') repositories mined, $n shards," \
    "$(sum_counts) examples; $(grep -c '^shards/mined/' <<< "${STALE:-}") shards stale"
  echo "  multi: $(multi_order | wc -l) repositories mirrored, $(count_files mined-multi '*.jsonl.gz') mined," \
    "$(count_files shards/multi '*.count') shards ($(sum_counts multi) examples; in the plan:" \
    "$(multi_family_counts | awk '{ printf "%s%s %d", sep, $1, $2; sep = ", " }'));" \
    "$(grep -c '^shards/multi/' <<< "${STALE:-}") shards stale"
  echo "  docs: $(count_files mined-docs '*.jsonl.gz') repositories mined," \
    "$(count_files shards/docs '*.count') shards ($(sum_counts docs) pairs; in the multi plan:" \
    "$(docs_family_counts | awk '{ printf "%s%s %d", sep, $1, $2; sep = ", " }'));" \
    "$(grep -c '^shards/docs/' <<< "${STALE:-}") shards stale"
  echo "plans (one upload: $(mb "$UPLOAD_BYTES") with the tree's $(mb "$(tree_bytes)")):"
  for plan in $PLANS; do
    uploads=$(plan_uploads "$plan")
    # Missing items by their folder (bin, model, dev, shards/train…), each once.
    missing=$(echo "$uploads" | awk '$1 == 0 { sub(/\.(shard|xz.*)$/, "", $2); print $2 ($3 == "stale" ? " (stale)" : "") }' |
      sed 's|^model/.*|model|' | uniq | paste -sd' ')
    total=$(echo "$uploads" | awk '$1 != 0 { s += $3 } END { print s + 0 }')
    n=$(echo "$uploads" | awk '$1 != 0 { if ($1 > m) m = $1 } END { print m + 0 }')
    local mined gap; mined=$(plan_mined_examples "$plan") gap=$(plan_gap "$plan")
    if [ -z "$missing" ] && [ -z "$gap" ]; then
      echo "  $plan: READY, $(mb "$total") in $n uploads, $mined mined examples"
    else
      echo "  $plan: not ready (${missing:+missing: $missing}${missing:+${gap:+; }}$gap)"
    fi
  done
}
