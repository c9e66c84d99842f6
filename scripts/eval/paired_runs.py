#!/usr/bin/env python3
"""Two `--eval --out` runs over the instances both scored: each retriever's mean MRR, PR@5 and
PR@20, A → B, and the difference (issue 82: int8 products against bf16 or f32).

    scripts/eval/paired_runs.py A B [--retrievers dense,hybrid]
"""
import argparse

from eval_runs import bad, ok_rows

p = argparse.ArgumentParser()
p.add_argument("a")
p.add_argument("b")
p.add_argument("--retrievers", default="bm25,dense,hybrid")
args = p.parse_args()
a, b = ok_rows(args.a), ok_rows(args.b)
both = sorted(set(a) & set(b))
if not both:
    bad(f"{args.a} and {args.b} share no scored instance")
print(f"{len(both)} instances scored by both ({len(a)} in A, {len(b)} in B)")
for r in args.retrievers.split(","):
    for key in ["mrr", "perfect_recall@5", "perfect_recall@20"]:
        x = [a[i]["metrics"].get(r, {}).get(key) for i in both]
        y = [b[i]["metrics"].get(r, {}).get(key) for i in both]
        if None in x or None in y:
            continue
        ma, mb = sum(x) / len(x), sum(y) / len(y)
        print(f"{r:7} {key:18} {ma:.4f} -> {mb:.4f} ({mb - ma:+.4f})")
