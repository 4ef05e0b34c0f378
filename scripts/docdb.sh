#!/usr/bin/env bash
# Builds (if needed) and runs the docdb binary: scripts/docdb.sh <command> [args...]
# e.g. scripts/docdb.sh serve --data-dir ./docdb-data (the default with no arguments)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/prereqs.sh"
ensure_build_prereqs
if [ $# -eq 0 ]; then set -- serve --data-dir ./docdb-data; fi
(cd "$root" && cargo build --release --quiet --workspace --all-targets)
exec "$CARGO_TARGET_DIR/release/docdb" "$@"
