#!/usr/bin/env bash
# Runs the randomized tests far longer than CI does, with new seeds each round, and stops at
# the first failure with the log that names its seed (each test prints how to replay it):
#   - the differential test against redis-server 7.0 (DOCDB_DIFF_OPS commands per seed),
#   - the document model on both engines (DOCDB_MODEL_OPS operations),
#   - the table model with a random seed (TABLE_MODEL_STEPS steps),
#   - once, the SIGKILL crash tests (100 rounds of the store, 30 of the server).
# Usage: scripts/soak.sh [ROUNDS] (default 3). Lengths come from the environment: DOCDB_DIFF_OPS
# (default 40000), DOCDB_MODEL_OPS (100000), TABLE_MODEL_STEPS (30000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/prereqs.sh
ensure_build_prereqs
ensure_redis_tools

rounds="${1:-3}"
export DOCDB_DIFF_OPS="${DOCDB_DIFF_OPS:-40000}"
export DOCDB_MODEL_OPS="${DOCDB_MODEL_OPS:-100000}"
export TABLE_MODEL_STEPS="${TABLE_MODEL_STEPS:-30000}"
logs=$(mktemp -d /tmp/docdb-soak.XXXXXX)
echo "==> soak: $rounds rounds, logs in $logs"
cargo test --release -p docdb -p docdb-table -p docdb-cli --no-run --quiet

# run NAME ENV... -- CARGO_TEST_ARGS...: one test binary, its output to $logs/NAME.log.
run() {
  local name=$1 started=$SECONDS
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if env "${envs[@]}" cargo test --release --quiet "$@" >"$logs/$name.log" 2>&1; then
    echo "    ok   $name ($((SECONDS - started)) s)"
  else
    echo "    FAIL $name: see $logs/$name.log" >&2
    grep -E "seed|panicked" "$logs/$name.log" | head -n 20 >&2
    exit 1
  fi
}

for round in $(seq 1 "$rounds"); do
  echo "==> round $round of $rounds"
  run "diff-$round" -- -p docdb-cli --test redis_diff
  run "model-$round" -- -p docdb --test model
  table_seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
  run "table-model-$round" TABLE_MODEL_SEED="$table_seed" -- -p docdb-table --test model
done
echo "==> crash tests"
run crash DOCDB_CRASH_ROUNDS=100 -- -p docdb --test crash
run server-crash DOCDB_REDIS_CRASH_ROUNDS=30 -- -p docdb-cli --test redis_restart \
  crash_keeps_acknowledged_writes_with_fsync_always
echo "==> soak passed"
