#!/usr/bin/env bash
# Runs every check and test: formatting, clippy, the whole test suite (RocksDB included), and
# a bounded property/fuzz run. The README's test command; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prereqs.sh
ensure_build_prereqs
ensure_redis_tools

echo "==> cargo fmt --check"
cargo fmt --all -- --check

echo "==> cargo clippy (warnings are errors)"
cargo clippy --release --workspace --all-targets -- -D warnings

echo "==> cargo test (first build compiles RocksDB from source: ~30 min on 2 cores)"
cargo test --release --workspace

echo "==> bounded property run (PROPTEST_CASES=${DOCDB_PROPTEST_CASES:-5000})"
PROPTEST_CASES="${DOCDB_PROPTEST_CASES:-5000}" cargo test --release -p dockv -- --quiet

echo "==> bounded fuzz run"
scripts/fuzz.sh "${DOCDB_FUZZ_SECONDS:-20}"
