#!/usr/bin/env bash
# Runs each cargo-fuzz target for a bounded time (default 20 s each): decoders of keys,
# SubDocKeys, values, saved runs of deleted documents and RESP requests, and the Lua
# libraries' decoders (cjson, cmsgpack, struct), DUMP payloads (RESTORE) and the records a
# stream is stored as, must never panic.
# Usage: scripts/fuzz.sh [SECONDS]
# cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP lets the stable toolchain provide them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
if ! command -v cargo-fuzz >/dev/null; then
  echo "==> installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/docdb-fuzz-target}"
log=$(mktemp)
for target in decode_key_entry decode_sub_doc_key decode_value decode_saved_spans parse_resp_request lua_decoders rdb_payload stream_records; do
  echo "==> fuzz $target for ${seconds}s"
  mkdir -p "fuzz/corpus/$target"
  # A failure prints the crashing input and its artifact path, and fails this script.
  if ! cargo fuzz run "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz target $target failed" >&2
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$log" || tail -n 2 "$log"
done
