#!/usr/bin/env bash
# Mines every repository of a list into one .jsonl.gz each (#45), resumably: a repository whose
# output exists is skipped, and each output is written atomically by the miner.
#
#   [MINE_ARGS="--max-commits 3000"] scripts/mine/mine-all.sh scripts/mine/repos.tsv MIRRORS OUT [CORET_TUI]
#
# repos.tsv: OWNER/NAME first on each line (other columns and `#` lines ignored). MIRRORS holds
# the bare repositories as `fetch` lays them out (OWNER+NAME/repo, or OWNER+NAME/repo/.git);
# anywhere else, `git clone --bare https://github.com/OWNER/NAME MIRRORS/OWNER+NAME/repo`
# gives the same. Summaries go to OUT/summary.log, one block per repository.
set -euo pipefail
list=$1 mirrors=$2 out=$3 bin=${4:-coret-tui}
mkdir -p "$out"
grep -v '^#' "$list" | cut -f1 | while read -r repo; do
    [[ -n "$repo" ]] || continue
    name=${repo/\//+}
    dest="$out/$name.jsonl.gz"
    [[ -e "$dest" ]] && continue
    git_dir="$mirrors/$name/repo"
    [[ -d "$git_dir/.git" ]] && git_dir="$git_dir/.git"
    if [[ ! -d "$git_dir" ]]; then
        echo "$repo: no mirror at $git_dir (skipped)" | tee -a "$out/summary.log" >&2
        continue
    fi
    echo "== $repo" >>"$out/summary.log"
    # shellcheck disable=SC2086 # MINE_ARGS is a list of flags
    "$bin" --mine "$git_dir" --repo-name "$repo" --mine-out "$dest" ${MINE_ARGS:-} 2>>"$out/summary.log" ||
        echo "$repo: the miner failed (see above)" | tee -a "$out/summary.log" >&2
done
