#!/usr/bin/env python3
"""PR@5 / PR@20 / MRR per retriever over the rows of one or more `--eval --out` directories: the
figures one evaluation over their union would report (e.g. the 51 and the 55 as all 106), since
each is a mean over instances.

    scripts/eval/eval_combine.py OUT51 OUT55
"""
import sys

from eval_runs import all_rows

rows = [r for d in sys.argv[1:] for r in all_rows(d)]
ok = [r for r in rows if r.get("status") == "ok" and r.get("metrics")]
print(f"{len(ok)} of {len(rows)} instances scored")
for ret in ("bm25", "dense", "hybrid", "rerank"):
    m = [r["metrics"][ret] for r in ok if ret in r["metrics"]]
    if not m:
        continue
    mean = lambda k: sum(x[k] for x in m) / len(m)
    print(f"{ret:7s} {mean('perfect_recall@5'):.3f} / {mean('perfect_recall@20'):.3f} / {mean('mrr'):.3f}  "
          f"({sum(x['perfect_recall@5'] for x in m):.0f} and {sum(x['perfect_recall@20'] for x in m):.0f} instances, n={len(m)})")
