#!/usr/bin/env python3
"""What the miner kept (#45): instances per repository, and their message lengths against the
dev issues' and train-prs' problem statements.

    scripts/mine/summary.py MINED_DIR [DEV.jsonl] [TRAIN.jsonl.gz]  ->  markdown on stdout
"""
import gzip
import json
import statistics
import sys
from pathlib import Path


def read(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else 0


def row(name, lengths):
    return (f"| {name} | {len(lengths)} | {pct(lengths, 10)} | {pct(lengths, 25)} | {int(statistics.median(lengths)) if lengths else 0} "
            f"| {pct(lengths, 75)} | {pct(lengths, 90)} | {sum(l >= 300 for l in lengths)} | {sum(l >= 600 for l in lengths)} |")


def main():
    mined = Path(sys.argv[1])
    per_repo, lengths = [], []
    for f in sorted(mined.glob("*.jsonl.gz")):
        rows = read(f)
        ls = [len(r["problem_statement"]) for r in rows]
        lengths += ls
        per_repo.append((f.name.removesuffix(".jsonl.gz").replace("+", "/", 1), len(rows), int(statistics.median(ls)) if ls else 0))
    print("| set | instances | p10 | p25 | median | p75 | p90 | >= 300 | >= 600 |\n|---|---|---|---|---|---|---|---|---|")
    print(row(f"mined ({len(per_repo)} repositories)", lengths))
    for label, arg in (("dev issues", 2), ("train-prs", 3)):
        if len(sys.argv) > arg:
            print(row(label, [len(r["problem_statement"]) for r in read(sys.argv[arg])]))
    print("\n| repository | instances | median message |\n|---|---|---|")
    for name, n, med in sorted(per_repo, key=lambda r: -r[1]):
        print(f"| {name} | {n} | {med} |")


if __name__ == "__main__":
    main()
