#!/usr/bin/env python3
"""Re-score an `--eval --keep-lists N` run with a file's module-level code as one item.

Since window chunks (issue 64), a fix's edit to module-level code is gold in the ~40-line
window that holds it, where it was gold in the file's one module chunk before: a fix touching
two places of module-level code now has two gold chunks instead of one, and PR@k asks for both.
This view merges each file's module chunk and windows into one item (at the first of them in
the list, gold if any of them is), so figures compare with runs made before windows.

    scripts/eval/module_level_rescore.py OUT [--by language]
"""
import argparse
import collections
import pathlib

from eval_runs import all_rows

MODULE_LEVEL = ("module", "window")


def item(path, name, kind):
    return (path, "<module>") if kind in MODULE_LEVEL else (path, name)


def rescore(ranked, gold):
    golds = {item(g["path"], g["name"], g["kind"]) for g in gold}
    seen, ranks = set(), []
    for h in ranked:
        key = item(h["path"], h["name"], h["kind"])
        if key in seen:
            continue
        seen.add(key)
        if key in golds:
            ranks.append(len(seen))
    n = len(golds)
    within = lambda k: sum(r <= k for r in ranks)
    return {
        "PR@5": float(within(5) >= n),
        "PR@20": float(within(20) >= n),
        "MRR": 1 / ranks[0] if ranks else 0.0,
        "R@20": within(20) / n,
    }, n


def size_group(n):
    return "gold:1" if n == 1 else "gold:2-5" if n <= 5 else "gold:6+"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=pathlib.Path, help="an --eval --out directory")
    args = ap.parse_args()
    table = collections.defaultdict(lambda: collections.defaultdict(list))
    for d in all_rows(args.run):
        if not d.get("gold") or "lists" not in d:
            continue
        for retriever, ranked in d["lists"].items():
            scores, n = rescore(ranked, d["gold"])
            for group in ("all", size_group(n), "language:" + d.get("language", "python")):
                table[group][retriever].append(scores)
    retrievers = sorted({r for g in table.values() for r in g})
    print(f"{'group':<22} {'n':>4}  " + "  ".join(f"{r + ': PR@5 / PR@20 / MRR / R@20':<38}" for r in retrievers))
    order = ["all", "gold:1", "gold:2-5", "gold:6+"] + sorted(g for g in table if g.startswith("language:"))
    for group in order:
        if group not in table:
            continue
        cells = []
        for r in retrievers:
            rows = table[group][r]
            mean = lambda k: sum(x[k] for x in rows) / len(rows)
            cells.append(f"{mean('PR@5'):.3f} / {mean('PR@20'):.3f} / {mean('MRR'):.3f} / {mean('R@20'):.3f}".ljust(38))
        print(f"{group:<22} {len(table[group][retrievers[0]]):>4}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
