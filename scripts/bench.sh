#!/usr/bin/env bash
# Builds (if needed) and runs the end-to-end benchmarks: scripts/bench.sh storage [--docs N] ...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/prereqs.sh"
ensure_build_prereqs
# Same package selection as the test command, so the RocksDB build is shared.
(cd "$root" && cargo build --release --quiet --workspace --all-targets)
exec "$CARGO_TARGET_DIR/release/docdb-bench" "$@"
