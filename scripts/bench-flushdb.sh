#!/usr/bin/env bash
# FLUSHDB, then DBSIZE and SCAN: how long key scans take over the tombstones a FLUSHDB leaves
# (until a full compaction past the history cutoff removes them). Loads N keys into a fresh
# `docdb serve`, flushes them, then times DBSIZE and `SCAN 0 COUNT 10` three times each, a SET,
# and DBSIZE twice more; then restarts the server twice, timing the first DBSIZE after a
# graceful stop (which saves the runs of deleted keys) and after a SIGKILL (which does not).
# Each figure is the whole `redis-cli` call, so it includes the client's start (the PING line
# shows that floor). With --wait-sweep, the first DBSIZE waits until the server's background
# sweep has found the deleted keys' runs (INFO's deleted_keys_unswept at 0), and the wait is
# timed; without it, DBSIZE comes at once and does that reading itself.
#
#   scripts/bench-flushdb.sh [-n N] [--wait-sweep]     (default 200000)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n=200000
wait_sweep=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n="$2"; shift 2 ;;
    --wait-sweep) wait_sweep=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

source "$root/scripts/redis-bench-common.sh"
setup_redis_bench bench-flushdb
port="$(free_port)"
# Starts docdb over $work/data, kept across restarts (unlike the common start_server).
start_docdb() {
  "$docdb" serve --data-dir "$work/data" --listen "127.0.0.1:$port" --metrics-listen off \
    >>"$work/server.log" 2>&1 &
  server_pid=$!
  wait_ready "$port" "$work/server.log"
}
start_docdb

redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n "$n" -r 100000000 -P 16 -t set -q >/dev/null
echo "keys loaded: $(redis-cli -h 127.0.0.1 -p "$port" dbsize)"
timed() {
  local start end reply
  start=$(date +%s%N)
  reply=$(redis-cli -h 127.0.0.1 -p "$port" "$@" | head -c 40 | tr '\n' ' ')
  end=$(date +%s%N)
  printf '%-18s -> %-10s %10.1f ms\n' "$*" "$reply" "$(( (end - start) / 1000 ))e-3"
}
timed ping
timed flushdb
if [ "$wait_sweep" = 1 ]; then
  start=$(date +%s%N)
  for _ in $(seq 1 600); do
    unswept=$(redis-cli -h 127.0.0.1 -p "$port" info stats | tr -d '\r' \
      | sed -n 's/^deleted_keys_unswept://p')
    [ "$unswept" = 0 ] && break
    sleep 0.1
  done
  end=$(date +%s%N)
  printf '%-18s -> %-10s %10.1f ms\n' "(sweep wait)" "unswept $unswept" "$(( (end - start) / 1000 ))e-3"
fi
for _ in 1 2 3; do timed dbsize; done
for _ in 1 2 3; do timed scan 0 count 10; done
timed set a 1
for _ in 1 2; do timed dbsize; done

kill -TERM "$server_pid"; wait "$server_pid" || true
start_docdb
echo "after a graceful restart:"
timed dbsize
kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null || true
start_docdb
echo "after a SIGKILL and restart:"
timed dbsize
