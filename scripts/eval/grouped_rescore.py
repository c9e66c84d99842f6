#!/usr/bin/env python3
"""Flat vs grouped (one row per file, its module chunk nested) metrics re-scored from an eval's
kept rankings, by the definitions of `eval::metrics::grouped` (docs/GUIDE.md "Evaluation"), for
runs of a version without them. Input: OUT of

    coret-tui --eval DEV --repos DIR --retriever bm25 --keep-lists 1000 --out OUT

Usage: grouped_rescore.py OUT [RETRIEVER]   (default bm25). Prints the means over the instances
with gold, per fix size and per language: flat PR@5 and MRR beside the grouped order's (gPR@5,
gMRR: the rows first, then the nested chunks), NDCG@10 over the flat chunk list (a gold file at
its first chunk) beside NDCG@10, recall@10 and MRR over the rows (files)."""
import math, sys
from collections import defaultdict

from eval_runs import all_rows

out, retr = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "bm25")

def key(c): return (c["path"], c["name"], c["start_line"])

def ndcg(ranks, n, k=10):
    dcg = sum(1 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(n, k) + 1))
    return dcg / ideal if ideal else 0.0

def grouped_order(lst):
    groups, at = [], {}
    for i, h in enumerate(lst):
        p = h["path"]
        if p not in at:
            at[p] = len(groups); groups.append([])
        groups[at[p]].append((i + 1, h))
    for g in groups:
        for j, (_, h) in enumerate(g):
            if h["kind"] != "module":
                if j: g.insert(0, g.pop(j))
                break
    heads = [g[0][1] for g in groups]
    nested = sorted((x for g in groups for x in g[1:]), key=lambda x: x[0])
    return heads + [h for _, h in nested], [g[0][1]["path"] for g in groups]

sums = defaultdict(lambda: defaultdict(float)); counts = defaultdict(int)
for r in all_rows(out):
    if r.get("status") != "ok" or not r.get("gold"): continue
    lst = r.get("lists", {}).get(retr)
    if lst is None: continue
    gold = {key(g) for g in r["gold"]}
    files = list(dict.fromkeys(list(r.get("gold_files", [])) + [g["path"] for g in r["gold"]]))
    flat_rank = {}
    for i, h in enumerate(lst):
        flat_rank.setdefault(key(h), i + 1)
    g_order, rows = grouped_order(lst)
    g_rank = {}
    for i, h in enumerate(g_order):
        g_rank.setdefault(key(h), i + 1)
    first_chunk = {}
    for i, h in enumerate(lst):
        first_chunk.setdefault(h["path"], i + 1)
    row = {p: i + 1 for i, p in enumerate(rows)}
    fr = [flat_rank.get(g) for g in gold]; gr = [g_rank.get(g) for g in gold]
    m = {}
    for k in (1, 5, 10, 20):
        m[f"PR@{k}"] = float(all(x is not None and x <= k for x in fr))
        m[f"gPR@{k}"] = float(all(x is not None and x <= k for x in gr))
    m["MRR"] = max((1 / x for x in fr if x), default=0.0)
    m["gMRR"] = max((1 / x for x in gr if x), default=0.0)
    m["chunkNDCG@10"] = ndcg([first_chunk.get(f) for f in files], len(files))
    m["fileNDCG@10"] = ndcg([row.get(f) for f in files], len(files))
    m["fileR@10"] = sum(1 for f in files if row.get(f, 99) <= 10) / len(files)
    m["fileMRR"] = max((1 / row[f] for f in files if f in row), default=0.0)
    n = len(gold)
    size = "1" if n == 1 else ("2-5" if n <= 5 else "6+")
    for grp in ("all", f"gold {size}", f"lang {r.get('language') or 'python'}"):
        counts[grp] += 1
        for k, v in m.items(): sums[grp][k] += v
cols = ["PR@5", "gPR@5", "MRR", "gMRR", "chunkNDCG@10", "fileNDCG@10", "fileR@10", "fileMRR"]
print(f"{out} ({retr})")
print(f"{'group':<16}{'n':>4} " + "".join(f"{c:>13}" for c in cols))
for grp in sorted(counts, key=lambda g: (g != "all", g)):
    n = counts[grp]
    print(f"{grp:<16}{n:>4} " + "".join(f"{sums[grp][c]/n:>13.3f}" for c in cols))
