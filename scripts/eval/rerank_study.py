#!/usr/bin/env python3
"""Replays the reranker at several depths, and fused with the hybrid, from one eval that
re-scored the hybrid's top 50 (#46). The reranker scores each pair on its own, so the top 50's
scores give every shallower depth. Input: `instances.jsonl` of

    coret-tui --eval DEV --repos DIR --rerank RR --rerank-depth 50 --keep-lists 50 --out OUT

Usage: rerank_study.py OUT/instances.jsonl [OUT2/instances.jsonl ...]
Prints PR@5 / PR@20 / MRR on the 51 tuning instances (all but sympy), on sympy and on all, for
the hybrid (as replayed from its kept top 50), the reranker at depths 10/20/30/50, and two
fusions at each depth: reciprocal-rank fusion of the hybrid's and the reranker's ranks
(`rrf`), and the reranker's score plus the hybrid's rank prior (`prior`). A gold chunk beyond
the kept 50 counts as not found (as for every row alike)."""
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_runs import all_rows  # noqa: E402  (the one reader of eval rows)
from fusion_study import key, metrics  # noqa: E402  (one definition of a chunk and of the figures)

DEPTHS = (10, 20, 30, 50)


def load(paths):
    out = {}
    for path in paths:
        for r in all_rows(path):
            if r.get("status") != "ok":
                continue
            lists = r.get("lists", {})
            if "hybrid" not in lists or "rerank" not in lists:
                sys.exit(f"{path}: {r['instance_id']}: no kept hybrid and rerank lists (run eval with --keep-lists 50)")
            gold = {key(g) for g in r["gold"]}
            hybrid = [key(h) for h in lists["hybrid"]]
            scores = {key(h): h["score"] for h in lists["rerank"]}
            out[r["instance_id"]] = (gold, hybrid, scores)
    return out


def reorder(hybrid, scores, depth, how):
    head = [c for c in hybrid[:depth] if c in scores]
    if len(head) < min(depth, len(hybrid)):
        raise SystemExit(f"the reranker scored fewer than {depth} of the hybrid's head: rerun with --rerank-depth 50")
    by_score = sorted(head, key=lambda c: -scores[c])
    rr_rank = {c: i + 1 for i, c in enumerate(by_score)}
    if how == "rerank":
        new = by_score
    elif how == "rrf":
        # k = 10: the head is short, so a small k keeps the two orders' tops apart.
        new = sorted(head, key=lambda c: -(1 / (10 + rr_rank[c]) + 1 / (10 + hybrid.index(c) + 1)))
    else:  # prior: the score plus log-rank prior of the hybrid (−ln rank), in score units
        new = sorted(head, key=lambda c: -(scores[c] - math.log(hybrid.index(c) + 1)))
    return new + hybrid[depth:]


def report(data):
    rows = [("hybrid", lambda h, s: h)]
    for how in ("rerank", "rrf", "prior"):
        for d in DEPTHS:
            rows.append((f"{how}@{d}", lambda h, s, d=d, how=how: reorder(h, s, d, how)))
    groups = {
        "51": [i for i in data if not i.startswith("sympy__")],
        "sympy": [i for i in data if i.startswith("sympy__")],
        "all": list(data),
    }
    head = "".join(f"{g + f' ({len(ids)})':>24s}" for g, ids in groups.items() if ids)
    print(f"{'ranking':12s}{head}")
    for name, fn in rows:
        cells = []
        for ids in groups.values():
            if not ids:
                continue
            m = [metrics(fn(data[i][1], data[i][2]), data[i][0]) for i in ids]
            mean = [sum(x[j] for x in m) / len(m) for j in range(3)]
            cells.append(f"{mean[0]:.3f}/{mean[1]:.3f}/{mean[2]:.3f}".rjust(24))
        print(f"{name:12s}{''.join(cells)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    report(load(sys.argv[1:]))
