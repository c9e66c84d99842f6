#!/usr/bin/env python3
"""Issue 60's table per language: several `--eval --out` runs of the same instances side by side.

    scripts/eval/lang_table.py LABEL=OUT [LABEL=OUT ...] [--retriever dense,hybrid] [--metric mrr]

One row per language (and "all"), one column per run and retriever: the mean of METRIC over the
instances every run scored (an instance one run lacks is left out of all, and counted, so the
columns compare like with like). `--metric pr5small` is PR@5 over the fixes with at most five gold
chunks (issue 60's goal). Prints a Markdown table.
"""
import argparse
from collections import defaultdict

from eval_runs import bad, ok_rows


def value(r, retriever, metric):
    m = r["metrics"].get(retriever)
    if m is None:
        return None
    if metric == "pr5small":
        return m["perfect_recall@5"] if len(r.get("gold") or []) <= 5 else None
    return m[metric]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="LABEL=OUT")
    ap.add_argument("--retriever", default="dense,hybrid")
    ap.add_argument("--metric", default="mrr")
    a = ap.parse_args()
    runs = []
    for spec in a.runs:
        label, sep, path = spec.partition("=")
        if not sep:
            bad(f"{spec}: expected LABEL=OUT")
        runs.append((label, ok_rows(path)))
    retrievers = a.retriever.split(",")
    known = {k for _, rs in runs for r in rs.values() for m in r["metrics"].values() for k in m}
    if a.metric != "pr5small" and a.metric not in known:
        bad(f"--metric {a.metric}: not in these runs (pr5small or one of {', '.join(sorted(known))})")
    common = set.intersection(*(set(r) for _, r in runs))
    dropped = set.union(*(set(r) for _, r in runs)) - common
    if dropped:
        print(f"(left out: {len(dropped)} instances not scored by every run, e.g. {sorted(dropped)[0]})\n")
    groups = defaultdict(list)
    for iid in sorted(common):
        lang = runs[0][1][iid].get("language", "?")
        groups[lang].append(iid)
        groups["all"].append(iid)
    cols = [(rs, label, ret) for label, rs in runs for ret in retrievers]
    print("| language | n | " + " | ".join(f"{ret}, {label}" for _, label, ret in cols) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in cols) + " |")
    for lang in ["all"] + sorted(g for g in groups if g != "all"):
        cells = []
        n = 0
        for rs, _, ret in cols:
            vals = [v for iid in groups[lang] if (v := value(rs[iid], ret, a.metric)) is not None]
            n = len(vals)
            cells.append(f"{sum(vals) / len(vals):.3f}" if vals else "–")
        print(f"| {lang} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
