#!/usr/bin/env bash
# Where `docdb serve`'s CPU goes per redis-benchmark command: a `perf` profile of the server
# while redis-benchmark runs, its samples split by where they land.
#
#   scripts/profile-redis.sh [-n N] [-P PIPELINE] [-t set,get,...]
#
# -n N         requests per command (default 300000); commands that read what others wrote
#              (GET after SET, LPOP after LPUSH and RPUSH) get those first, unprofiled
# -P PIPELINE  redis-benchmark's -P (default 1)
# -t TESTS     commands (default: redis-benchmark's ten of scripts/bench-redis.sh)
#
# Columns are shares of the server's samples: kernel (sockets, the WAL write, scheduling),
# RocksDB (its C++ code), memory (allocator, memcpy/memcmp), tokio (the async runtime) and
# docdb (everything else: RESP, commands, DocDB encoding and reads). Needs `perf` (Debian
# linux-perf) and permission to profile another process.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

n=300000
pipeline=1
tests="set,get,incr,lpush,rpush,lpop,sadd,hset,zadd,mset"
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n="$2"; shift 2 ;;
    -P) pipeline="$2"; shift 2 ;;
    -t) tests="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

source "$root/scripts/redis-bench-common.sh"
command -v perf >/dev/null || { echo "error: perf is not installed (Debian: linux-perf)" >&2; exit 1; }
setup_redis_bench profile-redis
port="$(free_port)"

bench() {
  redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n "$n" -r 1000000 -P "$pipeline" -t "$1" -q \
    | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | awk '{ print $1 }'
}

echo "| command | rps | kernel | RocksDB | memory | tokio | docdb |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for cmd in ${tests//,/ }; do
  rm -rf "$work/data"
  "$docdb" serve --data-dir "$work/data" --listen "127.0.0.1:$port" --metrics-listen off \
    >"$work/server.log" 2>&1 &
  server_pid=$!
  wait_ready "$port" "$work/server.log"
  case "$cmd" in
    get) bench set >/dev/null ;;
    lpop) bench lpush >/dev/null; bench rpush >/dev/null ;;
  esac
  # The profile starts once the run is under way and ends before it does.
  (sleep 0.3; perf record -F 999 -g -o "$work/perf.data" -p "$server_pid" -- sleep 2 \
    >/dev/null 2>&1) &
  profiler=$!
  rps="$(bench "$cmd")"
  wait "$profiler" || true
  kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  perf report -i "$work/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null \
    | awk -v cmd="$cmd" -v rps="$rps" '
      /^#/ || NF < 3 { next }
      {
        share = $1; sub(/%/, "", share)
        if ($0 ~ /\[k\]/) k += share
        else if ($0 ~ /rocksdb|crc32c|XXH|LZ4|Snappy/) r += share
        else if ($0 ~ /mi_|malloc|free|memcpy|memmove|memcmp|memset|realloc/) m += share
        else if ($0 ~ /tokio|mio::/) t += share
        else d += share
      }
      END {
        if (k + r + m + t + d == 0) {
          printf "| %s | %.0f | no samples: the run ended first (raise -n) |\n", toupper(cmd), rps
        } else {
          printf "| %s | %.0f | %.0f%% | %.0f%% | %.0f%% | %.0f%% | %.0f%% |\n",
            toupper(cmd), rps, k, r, m, t, d
        }
      }'
done
