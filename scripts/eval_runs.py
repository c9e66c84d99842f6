"""The rows of an `--eval --out` directory (`OUT/instances.jsonl`), shared by the scripts that
compare runs: a bad line or a missing file is one message naming it, never a traceback."""
import json
import sys


def ok_rows(out_dir):
    """Instance id -> row, for the instances the run scored (status "ok", with metrics)."""
    rows = {}
    name = f"{out_dir}/instances.jsonl"
    try:
        with open(name) as f:
            for k, line in enumerate(f, 1):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    bad(f"{name}:{k}: not JSON ({e})")
                if r.get("status") == "ok" and r.get("metrics"):
                    rows[r["instance_id"]] = r
    except OSError as e:
        bad(f"{name}: {e.strerror}")
    return rows


def bad(message):
    """Bad input: the message on stderr, exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)
