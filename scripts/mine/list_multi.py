#!/usr/bin/env python3
"""Writes scripts/mine/repos-multi.tsv (#60): the multi-language repositories, by language,
with what measure.py found (on the newest 3,000 commits) and what the miner kept.

    scripts/mine/list_multi.py MEASURE.tsv MINED_DIR > scripts/mine/repos-multi.tsv

MEASURE.tsv: `measure.py OWNER/NAME GIT_DIR LANGUAGE 3000` lines with the language inserted
after the repository (`repo, language, commits, …`), in the order wanted within each language;
languages keep the order they first appear in. The mined columns come from
MINED_DIR/summary.log for repositories whose OWNER+NAME.jsonl.gz is there (empty otherwise).
prepare.sh mines and prepares the list round robin over its languages (lib.sh's multi_order).
"""
import re
import sys
from pathlib import Path


def main():
    measure, mined = sys.argv[1], Path(sys.argv[2])
    kept, seen = {}, {}
    for line in open(mined / "summary.log"):
        m = re.match(r"(\S+/\S+) \(.*\): (\d+) commits seen, (\d+) kept", line)
        if m and (mined / (m.group(1).replace("/", "+", 1) + ".jsonl.gz")).exists():
            seen[m.group(1)], kept[m.group(1)] = int(m.group(2)), int(m.group(3))
    rows = [l.rstrip("\n").split("\t") for l in open(measure) if l.strip() and not l.startswith("#")]
    langs = list(dict.fromkeys(r[1] for r in rows))
    print("# repo\tlanguage\tcommits\tmedian_message\tmessages>=100\t>=300\t>=600\tlong_src_commits\tmined_seen\tmined_kept")
    for lang in langs:
        for r in (r for r in rows if r[1] == lang):
            print("\t".join(r + [str(seen.get(r[0], "")), str(kept.get(r[0], ""))]))


if __name__ == "__main__":
    main()
