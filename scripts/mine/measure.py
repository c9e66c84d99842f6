#!/usr/bin/env python3
"""How a repository's commit messages read, before mining it (#45's selection step).

    scripts/mine/measure.py OWNER/NAME GIT_DIR [LANGUAGE [MAX_COMMITS]]  ->  one tab-separated
    line on stdout: repo, non-merge commits, median cleaned message length, commits >= 100,
    >= 300, >= 600 characters, and how many of those >= 100 touch a non-test source file of
    LANGUAGE (python by default; rust go javascript typescript java c cpp: the extensions of
    src/lang's table). MAX_COMMITS reads only the newest ones (0: all).

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
# src/lang/mod.rs's extensions per language (C headers count for C and C++ alike here).
EXTENSIONS = {
    "python": ("py",), "rust": ("rs",), "go": ("go",), "javascript": ("js", "mjs", "cjs", "jsx"),
    "typescript": ("ts", "tsx", "mts", "cts"), "java": ("java",), "c": ("c", "h"),
    "cpp": ("cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl", "h"),
}
# A cheap stand-in for src/lang's test-file rules: test directories, test_/_test/.test./.spec. names.
TEST = re.compile(r"(^|/)(tests?|testing|testdata|__tests__|spec)/|(^|/)test_|_tests?\.[a-z+]+$|\.(test|spec)\.[a-z]+$|Tests?\.java$")


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
    exts = EXTENSIONS[sys.argv[3] if len(sys.argv) > 3 else "python"]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "log", "--no-merges", "--no-renames", "--format=%x01%B%x02", "--name-only"]
        + ([f"--max-count={limit}"] if limit else []) + ["HEAD"],
        capture_output=True, text=True, errors="replace", check=True).stdout
    lengths, py_long = [], 0
    for record in out.split("\x01")[1:]:
        msg, _, files = record.partition("\x02")
        n = len(clean(msg))
        lengths.append(n)
        if n >= 100 and any(f.rsplit(".", 1)[-1].lower() in exts and not TEST.search(f) for f in files.split()):
            py_long += 1
    if not lengths:
        print(f"{repo}\t0\t0\t0\t0\t0\t0")
        return
    ge = lambda k: sum(l >= k for l in lengths)
    print(f"{repo}\t{len(lengths)}\t{int(statistics.median(lengths))}\t{ge(100)}\t{ge(300)}\t{ge(600)}\t{py_long}")


if __name__ == "__main__":
    main()
