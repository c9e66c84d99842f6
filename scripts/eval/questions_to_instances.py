#!/usr/bin/env python3
"""Turn the short-question dev set (data/questions/*.jsonl) into `--eval` instances.

`coret-tui --eval` computes its gold from a patch: the gold chunks are the chunks of the base
snapshot that contain lines the patch removes or modifies, the gold files are the files it edits
(docs/GUIDE.md "Evaluation"). A question's answer is a list of files, so each instance gets a
synthetic patch that removes every line of each answer file at the pinned commit (one hunk
`@@ -1,N +0,0 @@` per file, never applied, only read). Then:

- gold files = the question's files (in the question's order, primary first);
- gold chunks = every chunk of those files, so the eval's MRR is 1/rank of the first chunk of
  any answer file ("a file counting at its first chunk") and its file Acc@k is 1 when every
  answer file is among the first k files. Perfect-Recall@k and Recall@k (all chunks of the
  files) mean nothing here: read scripts/eval/score_questions.py's NDCG@10 / recall@10 instead.

The generated file holds the repositories' code (the patches), so write it outside the project
tree or under target/ (git-ignored); never commit it. Instances keep the question's `kind` and
`files` as extra fields (the eval ignores unknown fields).

    scripts/eval/questions_to_instances.py --repos /work/.mirror --out target/questions/instances.jsonl
    scripts/eval/questions_to_instances.py --repos /work/.mirror --check      # verify only

`--repos DIR` has the layout `--eval` reads: DIR/<owner>+<name>/repo, DIR/<owner>+<name> or
DIR/<owner>/<name>, bare or not.
"""

import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_INPUTS = os.path.join(HERE, "..", "..", "data", "questions", "*.jsonl")
KINDS = ("question", "name")
FIELDS = ("id", "repo", "commit", "language", "kind", "query", "files")


def git_dir(repos, repo):
    owner, name = repo.split("/", 1)
    for cand in (
        os.path.join(repos, f"{owner}+{name}", "repo"),
        os.path.join(repos, f"{owner}+{name}"),
        os.path.join(repos, owner, name),
    ):
        if os.path.isdir(cand):
            return cand
    raise SystemExit(f"{repo}: no repository under {repos}")


def read_blob(git, commit, path):
    """The file's bytes at `commit`, or None when it is not there."""
    r = subprocess.run(
        ["git", "--git-dir", git, "cat-file", "blob", f"{commit}:{path}"]
        if os.path.isdir(os.path.join(git, "objects"))
        else ["git", "-C", git, "cat-file", "blob", f"{commit}:{path}"],
        capture_output=True,
    )
    return r.stdout if r.returncode == 0 else None


def rust_lines(text):
    """`str::lines` as Rust has it (the eval splits both the patch and the file this way):
    split on \\n, drop one trailing \\r per line, no empty last line after a final \\n."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l[:-1] if l.endswith("\r") else l for l in lines]


def whole_file_patch(path, text):
    lines = rust_lines(text)
    head = [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}", f"@@ -1,{len(lines)} +0,0 @@"]
    return "\n".join(head + ["-" + l for l in lines]) + "\n"


def load_questions(paths):
    questions, seen = [], set()
    for p in paths:
        for n, line in enumerate(open(p, encoding="utf-8"), 1):
            if not line.strip():
                continue
            q = json.loads(line)
            where = f"{p}:{n}"
            missing = [f for f in FIELDS if f not in q]
            if missing:
                raise SystemExit(f"{where}: missing {missing}")
            if q["kind"] not in KINDS:
                raise SystemExit(f"{where}: kind {q['kind']!r} is not one of {KINDS}")
            if not 1 <= len(q["files"]) <= 3 or len(set(q["files"])) != len(q["files"]):
                raise SystemExit(f"{where}: files must be 1-3 distinct paths")
            if q["id"] in seen:
                raise SystemExit(f"{where}: duplicate id {q['id']}")
            seen.add(q["id"])
            questions.append(q)
    return questions


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("questions", nargs="*", help="question files (default: data/questions/*.jsonl)")
    ap.add_argument("--repos", required=True, help="directory of the repositories, as --eval's --repos")
    ap.add_argument("--out", help="instances file to write (.jsonl); '-' for stdout")
    ap.add_argument("--check", action="store_true", help="only verify that every file exists at its commit")
    ap.add_argument("--kind", choices=KINDS, help="keep one kind of query")
    ap.add_argument("--repo", action="append", help="keep these owner/name repositories (repeatable)")
    ap.add_argument("--split", choices=("tune", "heldout", "devrepos"),
                    help="keep one split: the 19-language set's tuning or held-out repositories, or the first ten (dev-set repositories)")
    args = ap.parse_args()
    if not args.check and not args.out:
        ap.error("--out FILE or --check")

    paths = args.questions or sorted(glob.glob(DEFAULT_INPUTS))
    questions = load_questions(paths)
    if args.kind:
        questions = [q for q in questions if q["kind"] == args.kind]
    if args.repo:
        questions = [q for q in questions if q["repo"] in args.repo]
    if args.split:
        questions = [q for q in questions if q.get("split", "devrepos") == args.split]

    problems, lossy, instances, blobs = [], set(), [], {}
    for q in questions:
        git = git_dir(args.repos, q["repo"])
        patches = []
        for path in q["files"]:
            key = (q["repo"], q["commit"], path)
            if key not in blobs:
                blobs[key] = read_blob(git, q["commit"], path)
            data = blobs[key]
            if data is None:
                problems.append(f"{q['id']}: {path} is not in {q['repo']} at {q['commit'][:12]}")
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("utf-8", errors="replace")
                lossy.add(path)
            # The eval reads sources without their byte-order mark (src/repo/source.rs).
            text = text.removeprefix("\ufeff")
            if not any(l.strip() for l in rust_lines(text)):
                problems.append(f"{q['id']}: {path} has no code")
                continue
            patches.append(whole_file_patch(path, text))
        instances.append({
            "instance_id": q["id"],
            "repo": q["repo"],
            "base_commit": q["commit"],
            "problem_statement": q["query"],
            "patch": "".join(patches),
            "hints_text": None,
            "language": q["language"],
            "kind": q["kind"],
            "category": q.get("category"),
            "split": q.get("split", "devrepos"),
            "files": q["files"],
        })

    for p in problems:
        print(p, file=sys.stderr)
    for p in sorted(lossy):
        print(f"warning: {p} is not valid UTF-8 (decoded lossily; its hunk may not match)", file=sys.stderr)
    n_files = sum(len(q["files"]) for q in questions)
    print(f"{len(questions)} queries, {n_files} answer files, {len(problems)} problems", file=sys.stderr)
    if problems:
        sys.exit(1)
    if args.check:
        return
    out = sys.stdout if args.out == "-" else None
    if out is None:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        out = open(args.out, "w", encoding="utf-8")
    for inst in instances:
        out.write(json.dumps(inst, ensure_ascii=False) + "\n")
    if out is not sys.stdout:
        out.close()
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
