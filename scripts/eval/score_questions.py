#!/usr/bin/env python3
"""Score `coret-tui --eval` runs on the short-question dev set (data/questions/) at file level.

Run the eval with `--out DIR --keep-lists 200` on the instances that
scripts/eval/questions_to_instances.py made, then

    scripts/eval/score_questions.py DIR [DIR2 ...] [--by kind,language,repo] [--json]

Each kept ranking (bm25, dense, hybrid, ... whatever the run kept) is scored against the
question's answer files G (data/questions/*.jsonl, read again here; binary relevance):

- ndcg@10 (chunk list): the flat chunk ranking's first 10 rows; a row counts when its file is in
  G and it is that file's first row in the list (a file counts once, at its first chunk).
  DCG = sum 1/log2(rank+1); ideal DCG puts min(|G|, 10) relevant rows first.
- ndcg@10 (file list): the same over files ordered by first appearance in the chunk ranking
  (what a file-grouped list shows).
- mrr: 1/rank of the first chunk of any file of G. Taken from the eval's own `mrr` (rankings
  1,000 deep) when the run has it, else from the kept list (0 beyond it).
- recall@10 (chunk list / file list): the share of G among the files of the first 10 chunks /
  among the first 10 files.
- hit@1 file: the first file is in G.

A question whose instance failed or got no gold (its files not indexed) scores 0 and is counted
under `missing`. With several DIRs, each is scored apart (e.g. main vs a branch); `--merge` scores them as one run
(e.g. one eval run per repository).
"""

import argparse
import glob
import json
import math
import os
import sys
from collections import defaultdict

from eval_runs import all_rows

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_QUESTIONS = os.path.join(HERE, "..", "..", "data", "questions", "*.jsonl")
METRICS = ("ndcg@10_chunk", "ndcg@10_file", "mrr", "recall@10_chunk", "recall@10_file", "hit@1_file")


def dcg(ranks):
    return sum(1.0 / math.log2(r + 1) for r in ranks)


def score_list(paths, gold, eval_mrr=None):
    """Metrics of one ranking given as the file path of each row, best first."""
    gold = list(dict.fromkeys(gold))
    first_row, files = {}, []
    for i, p in enumerate(paths, 1):
        if p not in first_row:
            first_row[p] = i
            files.append(p)
    ideal = dcg(range(1, min(len(gold), 10) + 1))
    chunk_ranks = [first_row[f] for f in gold if f in first_row and first_row[f] <= 10]
    file_rank = {f: i for i, f in enumerate(files, 1)}
    file_ranks = [file_rank[f] for f in gold if f in file_rank and file_rank[f] <= 10]
    first = min((first_row[f] for f in gold if f in first_row), default=None)
    mrr = eval_mrr if eval_mrr is not None else (1.0 / first if first else 0.0)
    return {
        "ndcg@10_chunk": dcg(chunk_ranks) / ideal,
        "ndcg@10_file": dcg(file_ranks) / ideal,
        "mrr": mrr,
        "recall@10_chunk": len(chunk_ranks) / len(gold),
        "recall@10_file": len(file_ranks) / len(gold),
        "hit@1_file": 1.0 if files and files[0] in gold else 0.0,
    }, len(files)


def load_questions(pattern):
    qs = {}
    for p in sorted(glob.glob(pattern)):
        for line in open(p, encoding="utf-8"):
            if line.strip():
                q = json.loads(line)
                # The first ten repositories (dev-set repositories, issue 64) predate the
                # `split` and `category` fields of the 19-language set (issue 80).
                q.setdefault("split", "devrepos")
                q.setdefault("category", "symbol" if q["kind"] == "name" else "question")
                qs[q["id"]] = q
    return qs


def score_run(run_dirs, questions, keep_lists):
    """{ranking: {question id: metrics}}, plus notes; `run_dirs` are read as one run."""
    results = []
    for run_dir in run_dirs:
        results += all_rows(run_dir)
    by_id = {r["instance_id"]: r for r in results}
    rankings = sorted({name for r in results for name in r.get("lists", {})})
    if not rankings:
        raise SystemExit(f"{run_dirs}: no kept lists; run the eval with --keep-lists 200")
    out = {name: {} for name in rankings}
    notes, missing = [], []
    for qid, q in questions.items():
        r = by_id.get(qid)
        if r is None:
            continue
        if r.get("status") != "ok":
            missing.append(f"{qid}: {r.get('status')} ({r.get('error')})")
        elif set(r.get("gold_files", [])) != set(q["files"]):
            notes.append(f"{qid}: eval gold files {r.get('gold_files')} differ from the question's {q['files']}")
        for name in rankings:
            hits = r.get("lists", {}).get(name, [])
            eval_mrr = r.get("metrics", {}).get(name, {}).get("mrr") if r.get("status") == "ok" else None
            m, n_files = score_list([h["path"] for h in hits], q["files"], eval_mrr)
            if r.get("status") == "ok" and len(hits) >= keep_lists and n_files < 10:
                notes.append(f"{qid}/{name}: kept list holds only {n_files} files; raise --keep-lists")
            out[name][qid] = m
    return out, notes, missing


def groups_of(q, by):
    yield "all"
    for key in by:
        yield f"{key}={q[key]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="eval --out directories")
    ap.add_argument("--questions", default=DEFAULT_QUESTIONS, help="glob of question files")
    ap.add_argument("--by", default="kind,language", help="comma list of fields to group by (kind,language,repo)")
    ap.add_argument("--merge", action="store_true", help="score all DIRs as one run (e.g. one run per repository)")
    ap.add_argument("--keep-lists", type=int, default=200, help="the run's --keep-lists (to tell a cut list)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args()
    questions = load_questions(args.questions)
    by = [b for b in args.by.split(",") if b]

    report = {}
    runs = {f"merged({len(args.runs)})": args.runs} if args.merge else {r: [r] for r in args.runs}
    for run, dirs in runs.items():
        scores, notes, missing = score_run(dirs, questions, args.keep_lists)
        for n in notes[:20]:
            print(f"note: {run}: {n}", file=sys.stderr)
        for m in missing:
            print(f"missing: {run}: {m}", file=sys.stderr)
        table = {}
        for name, per_q in scores.items():
            sums = defaultdict(lambda: defaultdict(float))
            counts = defaultdict(int)
            for qid, m in per_q.items():
                for g in groups_of(questions[qid], by):
                    counts[g] += 1
                    for k in METRICS:
                        sums[g][k] += m[k]
            table[name] = {g: {"n": counts[g], **{k: sums[g][k] / counts[g] for k in METRICS}} for g in counts}
        report[run] = {"rankings": table, "missing": len(missing)}

    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return
    header = f"{'run':<28} {'ranking':<10} {'group':<18} {'n':>4} " + " ".join(f"{k:>15}" for k in METRICS)
    print(header)
    for run, rep in report.items():
        for name, groups in rep["rankings"].items():
            for g in sorted(groups, key=lambda g: (g != "all", g)):
                row = groups[g]
                vals = " ".join(f"{row[k]:>15.3f}" for k in METRICS)
                print(f"{os.path.basename(os.path.normpath(run)):<28} {name:<10} {g:<18} {row['n']:>4} {vals}")
        if rep["missing"]:
            print(f"{run}: {rep['missing']} question(s) without a scored instance count as 0")


if __name__ == "__main__":
    main()
