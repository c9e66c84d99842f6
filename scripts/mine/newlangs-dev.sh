#!/usr/bin/env bash
# The six new languages' dev files (#63): real fixes (commit message -> the functions it
# changes) mined from scripts/mine/repos-newlangs-dev.tsv's repositories, two per language,
# merged into one file per language, OUT/LANGUAGE.jsonl (csharp ruby php kotlin swift scala, and
# #70's elixir bash haskell lua zig).
#
#   [CORET_TUI=target/release/coret-tui] [MIRRORS=/work/.mirror] scripts/mine/newlangs-dev.sh [OUT]
#
# OUT: target/newlangs-dev by default. MIRRORS holds the bare repositories as `fetch` lays them
# out (OWNER+NAME/repo), as mine-all.sh reads them. Knobs:
#   MINE_ARGS        --max-commits 800: prepare.sh's MULTI_MINE_ARGS, the multi-language
#                    training data's, so that dev and training instances are made alike
#   CONSISTENCY_TOP  100: training's --consistency-top (0: no filter)
#   PER_LANG         40: the most instances a language's file keeps
#   MIN_PER_LANG     25: fewer, and the language's `#spare` repository is mined as well
#   EVAL_FIRST       3 x PER_LANG: how many candidates the consistency filter looks at
#   LANGS            the languages to build (a space list; all of LIST's by default): #70's five
#                    are `LANGS="elixir bash haskell lua zig"`
#
# Steps (each repository's mining is resumable: mine-all.sh skips an output that exists):
#   1. mine-all.sh mines each repository into OUT/mined with MINE_ARGS; the miner's own limits
#      are the training data's too: cleaned messages of 100+ characters, 1..=8 gold chunks, no
#      test-only, revert, cherry-pick, merge or duplicate commits (src/train/mine.rs).
#   2. Per language, the instances whose `language` (the first file the fix edits) is that
#      language: a Kotlin repository's Java fix, or swift-nio's C shim, is no Kotlin or Swift
#      instance. Each repository newest first, the repositories taken in turn (list order), so
#      that any prefix of the file is balanced between them: OUT/LANGUAGE.all.jsonl.
#   3. The consistency filter training applies when it prepares a shard (--consistency-top):
#      BM25 over the instance's snapshot must rank a gold chunk within CONSISTENCY_TOP. It drops
#      commits whose message shares no words with the code it changes (a mined message is not
#      always about the code, an issue nearly always is). `--eval --retriever bm25` measures it
#      with the eval's own snapshot and gold; eval leaves out instances without gold too.
#   4. The first PER_LANG kept, in step 2's order: OUT/LANGUAGE.jsonl.
# OUT/summary.txt says what each step kept per language. Exit status 1 when a language has
# fewer than MIN_PER_LANG even with its spare (its file is written all the same).
#
# Dev data: these repositories must never be mined for training (DESIGN.md "Data and
# repositories"). They are not in cli/train_select.rs's HELD_OUT on purpose: --mine refuses
# those, and this script mines them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# Paths given relative to where the script is called from; defaults relative to the checkout.
LIST=$(realpath -m "${LIST:-$ROOT/scripts/mine/repos-newlangs-dev.tsv}")
BIN=$(realpath -m "${CORET_TUI:-$ROOT/target/release/coret-tui}")
MIRRORS=$(realpath -m "${MIRRORS:-/work/.mirror}")
OUT=$(realpath -m "${1:-$ROOT/target/newlangs-dev}")
cd "$ROOT"
MINE_ARGS=${MINE_ARGS:---max-commits 800}
CONSISTENCY_TOP=${CONSISTENCY_TOP:-100}
PER_LANG=${PER_LANG:-40}
MIN_PER_LANG=${MIN_PER_LANG:-25}
EVAL_FIRST=${EVAL_FIRST:-$((3 * PER_LANG))}
[[ -x "$BIN" ]] || { echo "newlangs-dev.sh: no coret-tui at $BIN (set CORET_TUI)" >&2; exit 2; }
mkdir -p "$OUT/mined" "$OUT/eval"

# LIST's rows as "ROLE OWNER/NAME LANGUAGE" (ROLE: dev, or spare for `#spare` lines).
rows() {
  awk -F'\t' '$1 == "#spare" && $2 != "" { print "spare", $2, $3; next }
              $1 !~ /^#/ && $1 != "" { print "dev", $1, $2 }' "$LIST"
}
LANGS=${LANGS:-$(rows | awk '!seen[$3]++ { print $3 }')}

# The binary must know every language: one mined without its row yields nothing ("no supported
# language") after minutes of reading history. --help lists the ids --lang accepts.
known=$("$BIN" --help | tr -s ' \n' ' ' | grep -o 'a comma list ([^)]*)' || true)
for lang in $LANGS; do
  grep -qw -- "$lang" <<< "$known" ||
    { echo "newlangs-dev.sh: $BIN does not know the language $lang yet (--lang: ${known:-?})" >&2; exit 2; }
done

# One repository's history into OUT/mined/OWNER+NAME.jsonl.gz (mine-all.sh: skipped once there).
mine_one() {
  local list; list=$(mktemp "$OUT/mined/list.XXXXXX")
  echo "$1" > "$list"
  MINE_ARGS=$MINE_ARGS nice scripts/mine/mine-all.sh "$list" "$MIRRORS" "$OUT/mined" "$BIN" || true
  rm -f "$list"
}

# merge LANGUAGE OWNER/NAME...: step 2, onto stdout; a count per repository on stderr.
merge() {
  python3 - "$OUT/mined" "$@" <<'PY'
import gzip, json, sys
from pathlib import Path
mined, lang, repos = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
lists = []
for repo in repos:
    f = mined / (repo.replace("/", "+", 1) + ".jsonl.gz")
    rows = [json.loads(l) for l in gzip.open(f, "rt")] if f.exists() else []
    ours = [r for r in rows if r.get("language") == lang]
    print(f"{repo} {len(rows)} mined, {len(ours)} in {lang}", file=sys.stderr)
    # Newest first; the id breaks a tie of dates (one day's commits) the same way every time.
    ours.sort(key=lambda r: r["instance_id"])
    ours.sort(key=lambda r: r.get("created_at") or "", reverse=True)
    lists.append(ours)
for i in range(max(map(len, lists), default=0)):
    for ours in lists:
        if i < len(ours):
            print(json.dumps(ours[i], ensure_ascii=False))
PY
}

# pick ALL EVAL_DIR: step 4, onto stdout: ALL's instances in order, those of the first
# EVAL_FIRST with a gold chunk within CONSISTENCY_TOP (every one when the filter is off).
pick() {
  python3 - "$1" "$2" "$CONSISTENCY_TOP" "$EVAL_FIRST" "$PER_LANG" <<'PY'
import json, sys
from pathlib import Path
all_path, eval_dir, top, first, cap = sys.argv[1], Path(sys.argv[2]), *map(int, sys.argv[3:])
rows = [json.loads(l) for l in open(all_path) if l.strip()]
if top > 0:
    ok, measured = set(), eval_dir / "instances.jsonl"
    for l in open(measured) if measured.exists() else []:
        r = json.loads(l)
        if r["status"] == "ok" and any(k is not None and k <= top for k in r["ranks"].get("bm25", [])):
            ok.add(r["instance_id"])
    rows = [r for r in rows[:first] if r["instance_id"] in ok]
for r in rows[:cap]:
    print(json.dumps(r, ensure_ascii=False))
PY
}

# One language, with REPOS: OUT/LANGUAGE.jsonl and its summary line; returns 1 when short.
build() {
  local lang=$1; shift
  local all=$OUT/$lang.all.jsonl eval_dir=$OUT/eval/$lang repo
  for repo in "$@"; do mine_one "$repo"; done
  # Called from an `||` list, where set -e does not reach: each step checks its own status.
  merge "$lang" "$@" > "$all.tmp" 2> "$OUT/$lang.merge.log" && mv "$all.tmp" "$all" ||
    { echo "newlangs-dev.sh: $lang: merging failed (see $OUT/$lang.merge.log)" >&2; return 2; }
  local n_all; n_all=$(wc -l < "$all")
  rm -rf "$eval_dir" # a run before the spare joined measured other instances
  if [[ $CONSISTENCY_TOP -gt 0 && $n_all -gt 0 ]]; then
    # BM25 alone loads no model; --no-cache leaves no index of dev repositories behind.
    nice "$BIN" --eval "$all" --repos "$MIRRORS" --retriever bm25 --limit "$EVAL_FIRST" --no-cache \
      --out "$eval_dir" > "$OUT/eval/$lang.log" 2>&1 ||
      { echo "newlangs-dev.sh: $lang: the consistency eval failed (see $OUT/eval/$lang.log)" >&2; return 2; }
  fi
  pick "$all" "$eval_dir" > "$OUT/$lang.jsonl.tmp" && mv "$OUT/$lang.jsonl.tmp" "$OUT/$lang.jsonl" ||
    { echo "newlangs-dev.sh: $lang: picking failed" >&2; return 2; }
  local kept; kept=$(wc -l < "$OUT/$lang.jsonl")
  local filter="no consistency filter"
  [[ $CONSISTENCY_TOP -eq 0 ]] ||
    filter="the first $((n_all < EVAL_FIRST ? n_all : EVAL_FIRST)) through the consistency filter (BM25 top $CONSISTENCY_TOP)"
  echo "$lang: $(paste -sd';' "$OUT/$lang.merge.log" | sed 's/;/; /g') -> $n_all; $filter; $kept kept -> $OUT/$lang.jsonl" |
    tee -a "$OUT/summary.txt" >&2
  [[ $kept -ge $MIN_PER_LANG ]]
}

: >> "$OUT/summary.txt"
short=()
for lang in $LANGS; do
  mapfile -t dev < <(rows | awk -v l="$lang" '$1 == "dev" && $3 == l { print $2 }')
  mapfile -t spare < <(rows | awk -v l="$lang" '$1 == "spare" && $3 == l { print $2 }')
  made=0
  build "$lang" "${dev[@]}" || made=$?
  [[ $made -eq 2 ]] && { short+=("$lang"); continue; }
  # Short of MIN_PER_LANG: the spare joins (taken in turn after the two, so the file stays balanced).
  if [[ $made -ne 0 && ${#spare[@]} -gt 0 ]]; then
    echo "$lang: fewer than $MIN_PER_LANG; adding the spare ${spare[*]}" | tee -a "$OUT/summary.txt" >&2
    made=0
    build "$lang" "${dev[@]}" "${spare[@]}" || made=$?
  fi
  [[ $made -eq 0 ]] || short+=("$lang")
done
if [[ ${#short[@]} -gt 0 ]]; then
  echo "newlangs-dev.sh: under $MIN_PER_LANG instances (or failed): ${short[*]} (see $OUT/summary.txt)" >&2
  exit 1
fi
