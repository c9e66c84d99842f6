#!/usr/bin/env python3
"""Writes train-prs instances whose message is followed by the lines the pull request added to
its test files, as an issue's reproduction snippet would follow its description
(docs/RESULTS.md: query towers trained on it, since removed; the output is ordinary --train input).

The tests are not in train-prs (its patches leave them out, as SWE-bench's do); they are read
from the repository's own history: the commit that merged the pull request is the one whose
subject ends in "(#N)" (squash merge) or starts "Merge pull request #N", and its first-parent
diff over test paths gives the added lines. Instances whose commit is not found or whose pull
request changed no test are written unchanged. Only the repositories named are written.

usage: train_with_tests.py TRAIN.jsonl.gz MIRRORS REPO,REPO MIN_CHARS OUT.jsonl [MAX_CHARS]
  MIRRORS holds <owner>+<name>/repo (bare) as for --repos; MIN_CHARS drops shorter messages
  (the same filter as --min-query-chars, applied to the message before the tests are added).
"""
import collections
import gzip
import json
import re
import subprocess
import sys


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    train, mirrors, repos, min_chars, out = sys.argv[1:6]
    max_chars = int(sys.argv[6]) if len(sys.argv) > 6 else 2000
    repos, min_chars = set(repos.split(",")), int(min_chars)

    def git(repo, *args):
        git_dir = f"{mirrors}/{repo.replace('/', '+')}/repo"
        run = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True,
                             errors="replace")
        if run.returncode != 0:
            sys.exit(f"{git_dir}: git {' '.join(args)} failed: {run.stderr.strip()}")
        return run.stdout

    merged = {}

    def merge_commits(repo):
        if repo not in merged:
            by_pr = {}
            for line in git(repo, "log", "--all", "--format=%H\t%s").splitlines():
                if "\t" not in line:
                    continue
                commit, subject = line.split("\t", 1)
                for squash, merge in re.findall(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)", subject):
                    by_pr.setdefault(squash or merge, commit)
            merged[repo] = by_pr
        return merged[repo]

    counts = collections.Counter()
    opener = gzip.open if train.endswith(".gz") else open
    with opener(train, "rt") as lines, open(out, "w") as sink:
        for number, line in enumerate(lines, 1):
            try:
                inst = json.loads(line)
                inst["repo"], inst["problem_statement"], inst["instance_id"]
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{train}:{number}: not a train-prs instance ({e!r})")
            if inst["repo"] not in repos or len(inst["problem_statement"]) < min_chars:
                continue
            counts["written"] += 1
            commit = merge_commits(inst["repo"]).get(inst["instance_id"].rsplit("-pr", 1)[-1])
            tests = []
            if commit:
                changed = git(inst["repo"], "diff", "--name-only", commit + "^1", commit).split()
                tests = [p for p in changed if is_test(p)]
            else:
                counts["merge_commit_not_found"] += 1
            if commit and not tests:
                counts["no_test_changed"] += 1
            if tests:
                diff = git(inst["repo"], "diff", "-U0", commit + "^1", commit, "--", *tests)
                added = [l[1:] for l in diff.splitlines()
                         if l.startswith("+") and not l.startswith("+++") and l[1:].strip()]
                inst["problem_statement"] += "\n\n" + "\n".join(added)[:max_chars]
                counts["with_tests"] += 1
            sink.write(json.dumps(inst) + "\n")
    print(json.dumps(counts), file=sys.stderr)


def is_test(path):
    name = path.rsplit("/", 1)[-1]
    parts = ("/" + path).split("/")
    return ("tests" in parts or "test" in parts or "test-data" in parts or name.startswith("test_")
            or name.endswith("_test.py") or name == "conftest.py")


if __name__ == "__main__":
    main()
