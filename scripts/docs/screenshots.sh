#!/usr/bin/env bash
# Screenshots of the real coret-tui on a real repository, into screenshots/ (PNG).
#
# Usage: scripts/docs/screenshots.sh [REPO_DIR] [OUT_DIR]
#   REPO_DIR  a checkout of psf/requests (default: ../bench-repos/requests beside this
#             repository); another Python repository works with ISSUE_FILE and HIT set.
#   OUT_DIR   where the PNGs go (default: screenshots/ in this repository).
#
# Environment (all optional):
#   CORET_TUI_BIN  binary to run (default: `cargo build --release`, then target/release/coret-tui)
#   ISSUE_FILE     issue text to paste (default: the psf/requests issue quoted below)
#   HIT            qualified name to select in the BM25 column for the preview and call-graph
#                  shots (default: SessionRedirectMixin.resolve_redirects; the top hit if absent)
#   CALLEE         callee of HIT to select and jump to (default: rebuild_method; else the first)
#   COLS ROWS      terminal size (default 140 x 42); FONT_PX font size in pixels (default 14)
#   INDEX_TIMEOUT  seconds to wait for the dense index (default 1800; ~1 min per 750 chunks on CPU)
#   CORET_MODEL, CORET_CACHE_DIR  as for coret-tui (the cache is reused; history is not touched)
#
# Needs tmux, python3, headless Chromium and the DejaVu fonts; pngquant (optional) shrinks
# the PNGs. On Debian/Ubuntu: apt-get install -y tmux chromium fonts-dejavu-core pngquant
#
# How: the TUI runs in a detached tmux session of a fixed size; keys and a bracketed paste
# go in with tmux, the screen comes out of `tmux capture-pane -e` (with colours), is turned
# into HTML by scripts/docs/ansi2html.py and photographed by headless Chromium.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REPO=$(cd "${1:-$ROOT/../bench-repos/requests}" && pwd)
OUT=${2:-$ROOT/screenshots}
COLS=${COLS:-140}
ROWS=${ROWS:-42}
FONT_PX=${FONT_PX:-14}
INDEX_TIMEOUT=${INDEX_TIMEOUT:-1800}
HIT=${HIT:-SessionRedirectMixin.resolve_redirects}
CALLEE=${CALLEE:-rebuild_method}

die() { echo "screenshots: $*" >&2; exit 1; }

for tool in tmux python3; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y tmux python3)"
done
CHROME=""
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null; then CHROME=$c; break; fi
done
[ -n "$CHROME" ] || die "no headless Chromium found (apt-get install -y chromium fonts-dejavu-core)"
fc-list 2>/dev/null | grep -q "DejaVu Sans Mono" \
    || echo "screenshots: DejaVu Sans Mono not found; columns may not line up (apt-get install -y fonts-dejavu-core)" >&2

if [ -z "${CORET_TUI_BIN:-}" ]; then
    (cd "$ROOT" && cargo build --release --quiet)
    TARGET=$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    CORET_TUI_BIN=$TARGET/release/coret-tui
fi
[ -x "$CORET_TUI_BIN" ] || die "$CORET_TUI_BIN is not an executable"
# Provisions the default model on first use (before the TUI takes the screen).
MODEL=$("$CORET_TUI_BIN" --fetch-model)

WORK=$(mktemp -d)
SOCK="coret-shots-$$"
TMUX_CMD=(tmux -L "$SOCK" -f "$WORK/tmux.conf")
cleanup() {
    "${TMUX_CMD[@]}" kill-server 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
printf 'set -g status off\nset -g escape-time 0\nset -g history-limit 0\n' >"$WORK/tmux.conf"

if [ -n "${ISSUE_FILE:-}" ]; then
    cp "$ISSUE_FILE" "$WORK/issue.txt"
else
    # The issue fixed by psf/requests pull request #1963 (SWE-bench instance psf__requests-1963).
    cat >"$WORK/issue.txt" <<'EOF'
`Session.resolve_redirects` copies the original request for all subsequent requests, can cause incorrect method selection
Consider the following redirection chain:

```
POST /do_something HTTP/1.1
Host: server.example.com
...

HTTP/1.1 303 See Other
Location: /new_thing_1513

GET /new_thing_1513
Host: server.example.com
...

HTTP/1.1 307 Temporary Redirect
Location: //failover.example.com/new_thing_1513
```

The intermediate 303 See Other has caused the POST to be converted to
a GET.  The subsequent 307 should preserve the GET.  However, because
`Session.resolve_redirects` starts each iteration by copying the _original_
request object, Requests will issue a POST!
EOF
fi

SESSION=""
screen() { "${TMUX_CMD[@]}" capture-pane -t "$SESSION" -p; }
keys() {
    for k in "$@"; do
        "${TMUX_CMD[@]}" send-keys -t "$SESSION" "$k"
        sleep 0.25  # one key at a time: Esc then a letter must not read as Alt-letter
    done
}

# Waits until the screen matches the extended regex $1 (timeout $2 seconds).
wait_for() {
    local pattern=$1 timeout=${2:-60} start=$SECONDS last=$SECONDS
    until screen | grep -Eq -- "$pattern"; do
        if screen | grep -q "dense failed"; then
            screen | tail -1 >&2
            die "the dense index failed (see the status line above)"
        fi
        if ((SECONDS - start > timeout)); then
            screen >&2
            die "timed out after ${timeout}s waiting for /$pattern/"
        fi
        if ((SECONDS - last >= 15)); then
            last=$SECONDS
            echo "  waiting: $(screen | tail -1 | tr -s ' ')" >&2
        fi
        sleep 0.5
    done
}

# Waits until the screen stops changing and nothing is loading.
settle() {
    local a b
    for _ in $(seq 1 60); do
        a=$(screen)
        sleep 0.4
        b=$(screen)
        # The preview's "loading PATH…" and a column's "searching…" (the TUI's own words).
        if [ "$a" = "$b" ] && ! grep -Eq "│loading [^ ]+…|searching…" <<<"$b"; then return; fi
    done
    die "the screen did not settle"
}

# Photographs the pane as $OUT/$1.png; $2 and $3 are the default colours of the theme.
shot() {
    local name=$1 fg=$2 bg=$3 size
    settle
    "${TMUX_CMD[@]}" capture-pane -t "$SESSION" -p -e -N >"$WORK/$name.ans"
    size=$(python3 "$ROOT/scripts/docs/ansi2html.py" "$WORK/$name.ans" "$WORK/$name.html" \
        --cols "$COLS" --rows "$ROWS" --font-px "$FONT_PX" --fg "$fg" --bg "$bg" --title "$name")
    "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$WORK/chrome" \
        --window-size="${size% *},${size#* }" --screenshot="$OUT/$name.png" \
        "file://$WORK/$name.html" >/dev/null 2>&1
    [ -s "$OUT/$name.png" ] || die "chromium wrote no $OUT/$name.png"
    if command -v pngquant >/dev/null; then
        pngquant --quality 80-100 --speed 1 --strip --force --output "$OUT/$name.png" "$OUT/$name.png" || true
    fi
    echo "  $OUT/$name.png ($(du -k "$OUT/$name.png" | cut -f1) KB)"
}

# Starts the TUI with theme $1, waits for the dense index, pastes the issue and searches.
start_and_search() {
    local previous=$SESSION
    SESSION="shots-$1"
    # CORET_DATA_DIR: a scratch query history, so the user's is neither shown nor changed.
    "${TMUX_CMD[@]}" new-session -d -s "$SESSION" -x "$COLS" -y "$ROWS" \
        "env TERM=xterm-256color COLORTERM=truecolor CORET_MODEL='$MODEL' CORET_DATA_DIR='$WORK/data' \
         '$CORET_TUI_BIN' '$REPO' --theme '$1'; sleep 600"
    # Only now: closing the last session stops the tmux server, racing the new session.
    if [ -n "$previous" ]; then "${TMUX_CMD[@]}" kill-session -t "$previous"; fi
    echo "indexing $REPO (theme $1)..." >&2
    wait_for '│ ready( |$)' "$INDEX_TIMEOUT"
    "${TMUX_CMD[@]}" load-buffer -b issue "$WORK/issue.txt"
    "${TMUX_CMD[@]}" paste-buffer -p -b issue -t "$SESSION"
    sleep 0.5
    keys C-Home C-s
    # Both result columns have a hit count in their titles.
    wait_for 'hits ·.*hits ·' 120
    keys Escape
}

# In the focused results column, moves down until the call graph title names $HIT.
select_hit() {
    for _ in $(seq 1 20); do
        settle
        if screen | grep -q "Call graph · $HIT "; then return; fi
        keys j
    done
    echo "screenshots: $HIT not in the first 20 BM25 hits; using the top hit" >&2
    keys g
}

# In the focused call graph, selects the callee named $CALLEE, else the first callee.
select_callee() {
    local callers callees
    settle
    callers=$(screen | grep -Eo 'callers \([0-9]+\)' | head -1 | grep -Eo '[0-9]+' || echo 0)
    callees=$(screen | grep -Eo 'callees \([0-9]+\)' | head -1 | grep -Eo '[0-9]+' || echo 0)
    for _ in $(seq 1 "$callers"); do keys j; done
    for i in $(seq 1 "$callees"); do
        settle
        if screen | grep -Eq "› [fmC≡] ([^ ]*\.)?$CALLEE "; then return; fi
        [ "$i" -lt "$callees" ] && keys j
    done
    echo "screenshots: no callee $CALLEE; using the first callee" >&2
    for _ in $(seq 2 "$callees"); do keys k; done
}

mkdir -p "$OUT"
echo "coret-tui $("$CORET_TUI_BIN" --version | cut -d' ' -f2) on $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'not git'))" >&2

start_and_search coret-dark
keys l                       # the CoRet dense column, its top hit selected
shot 01-results "#c0c5ce" "#1f242d"
keys h
select_hit
keys p                       # the preview of that hit
shot 02-preview "#c0c5ce" "#1f242d"
keys n                       # its call graph
select_callee
shot 03-callgraph "#c0c5ce" "#1f242d"
keys Enter                   # jump to it: the preview and the graph follow
shot 04-callgraph-jump "#c0c5ce" "#1f242d"
keys BSpace F6 BTab BTab     # back; the right column to hybrid; focus it
shot 05-hybrid "#c0c5ce" "#1f242d"
keys F1
shot 06-help "#c0c5ce" "#1f242d"
keys Escape C-q

start_and_search coret-light
keys l
shot 07-light "#24292f" "#fbfbfa"
keys C-q
echo "done: $OUT" >&2
