#!/usr/bin/env python3
"""How a repository's commit messages read, before mining it (#45's selection step).

    scripts/mine/measure.py OWNER/NAME GIT_DIR  ->  one tab-separated line on stdout:
    repo, non-merge commits, median cleaned message length, commits >= 100, >= 300, >= 600
    characters, and the share of commits touching a non-test .py file among those >= 100.

The cleaning is a cheap approximation of the miner's (src/train/mine_message.rs): the last
paragraph when it is all `Token: value` trailers, well-known trailer lines anywhere, and
issue / pull-request references. The miner's own summary is the figure that counts; this
only ranks candidates before spending the miner's CPU on them.
"""
import re
import statistics
import subprocess
import sys

TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*( [a-z]+)?:\s*\S")
KNOWN = re.compile(r"^(signed-off-by|co-authored-by|change-id|reviewed-on|reviewed-by|closes-bug|"
                   r"partial-bug|related-bug|depends-on|implements|story|task|cc)\s*:", re.I)
REF = re.compile(r"\(?\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see)?\s*(?:[\w.-]+/[\w.-]+)?#\d+\)?", re.I)
URL = re.compile(r"https?://\S+")


def clean(msg: str) -> str:
    paras = [p for p in re.split(r"\n\s*\n", msg.strip()) if p.strip()]
    if paras and all(TRAILER.match(l) for l in paras[-1].splitlines() if l.strip()):
        paras = paras[:-1]
    text = "\n\n".join(paras)
    lines = [l for l in text.splitlines() if not KNOWN.match(l.strip())]
    text = "\n".join(lines)
    text = URL.sub("", REF.sub("", text))
    return re.sub(r"\s+", " ", text).strip()


def main() -> None:
    repo, git_dir = sys.argv[1], sys.argv[2]
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "log", "--no-merges", "--format=%x01%B%x02", "--name-only", "HEAD"],
        capture_output=True, text=True, errors="replace", check=True).stdout
    lengths, py_long = [], 0
    for record in out.split("\x01")[1:]:
        msg, _, files = record.partition("\x02")
        n = len(clean(msg))
        lengths.append(n)
        if n >= 100 and any(f.endswith(".py") and not re.search(r"(^|/)(tests?|testing)/|(^|/)test_|_test\.py$", f)
                            for f in files.split()):
            py_long += 1
    if not lengths:
        print(f"{repo}\t0\t0\t0\t0\t0\t0")
        return
    ge = lambda k: sum(l >= k for l in lengths)
    print(f"{repo}\t{len(lengths)}\t{int(statistics.median(lengths))}\t{ge(100)}\t{ge(300)}\t{ge(600)}\t{py_long}")


if __name__ == "__main__":
    main()
