#!/usr/bin/env python3
"""PR@5 / PR@20 / MRR of one retriever on the dev set's two halves, from `--eval --out`
directories: the 51 tuning instances (every repository but sympy) and sympy's 55, held out.

    scripts/eval/eval_halves.py OUT [OUT ...] [--retriever hybrid]
"""
import argparse
import sys

from eval_runs import all_rows, bad


def halves(path, retriever):
    rows = {}
    for d in all_rows(path):
        m = d.get("metrics", {}).get(retriever)
        if m is None:
            bad(f"{path}/instances.jsonl: {d.get('instance_id')}: no {retriever} metrics")
        half = "55" if d["repo"] == "sympy/sympy" else "51"
        rows.setdefault(half, []).append((m["perfect_recall@5"], m["perfect_recall@20"], m["mrr"]))
    return {h: tuple(sum(r[i] for r in v) / len(v) for i in range(3)) for h, v in rows.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="+", help="an --eval --out directory")
    ap.add_argument("--retriever", default="hybrid")
    args = ap.parse_args()
    for path in args.out:
        try:
            figs = halves(path, args.retriever)
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}")
        cells = " | ".join(f"{h}: {a:.3f} / {b:.3f} / {c:.3f}" for h, (a, b, c) in sorted(figs.items()))
        print(f"{path}  {cells}")


if __name__ == "__main__":
    main()
