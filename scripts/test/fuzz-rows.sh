#!/usr/bin/env bash
# Issue 63: every language row's chunker and call resolver on a million mutated fixtures each
# (tests/support/fuzz.rs); prints a table of inputs, failures and seconds per row, exits 1 on any
# failure, with the failing inputs under target/fuzz/.
#
#   scripts/test/fuzz-rows.sh [INPUTS_PER_ROW] [LANG,...]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo run --release --quiet --example fuzz_rows -- "${1:-1000000}" ${2:+"$2"}
