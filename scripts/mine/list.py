#!/usr/bin/env python3
"""Writes scripts/mine/repos.tsv (#45): the repositories chosen for mining, with what
measure.py found before mining and what the miner kept (from mine-all.sh's summary.log).

    scripts/mine/list.py MEASURE.tsv MINED_DIR [MIN_LONG_PY] > scripts/mine/repos.tsv

MEASURE.tsv: measure.py's lines for every candidate; a repository is chosen when at least
MIN_LONG_PY (default 250) of its commits have a cleaned message of >= 100 characters and touch
a non-test .py file. The mined columns come from MINED_DIR/summary.log, for repositories whose
OWNER+NAME.jsonl.gz is there (empty: not mined yet).
"""
import re
import sys
from pathlib import Path


def main():
    measure, mined = sys.argv[1], Path(sys.argv[2])
    summary = mined / "summary.log"
    floor = int(sys.argv[3]) if len(sys.argv) > 3 else 250
    kept, seen = {}, {}
    for line in open(summary):
        m = re.match(r"(\S+/\S+) \(.*\): (\d+) commits seen, (\d+) kept", line)
        if m and (mined / (m.group(1).replace("/", "+", 1) + ".jsonl.gz")).exists():
            seen[m.group(1)], kept[m.group(1)] = int(m.group(2)), int(m.group(3))
    print("# repo\tcommits\tmedian_message\tmessages>=100\t>=300\t>=600\tlong_py_commits\tmined_seen\tmined_kept")
    rows = [l.rstrip("\n").split("\t") for l in open(measure) if l.strip() and not l.startswith("#")]
    for r in sorted(rows, key=lambda r: -int(r[6])):
        if int(r[6]) >= floor:
            print("\t".join(r + [str(seen.get(r[0], "")), str(kept.get(r[0], ""))]))


if __name__ == "__main__":
    main()
