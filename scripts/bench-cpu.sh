#!/usr/bin/env bash
# What one request costs in CPU, for `docdb serve` and redis-server: each command of the
# issue's run on a fresh server of each kind, with the requests per second, the server's
# user and system time per request (from /proc/PID/stat) and redis-benchmark's own CPU per
# request. On a machine where the client shares the cores with the server, these say how
# much of the machine a rate needs.
#
#   scripts/bench-cpu.sh [-n N] [-P PIPELINE] [-t TESTS] [--docdb-args "FLAGS"]
#
# -n N            requests per command (default 1000000)
# -P PIPELINE     redis-benchmark's pipeline depth (default 1)
# -t TESTS        commands, comma-separated (default the issue's ten)
# --docdb-args F  extra `docdb serve` flags
#
# Redis runs with AOF (appendfsync everysec, no RDB saves), docdb with --fsync everysec. Each
# command runs alone on an empty server, unlike bench-redis.sh, where a GET finds the keys the
# SETs before it wrote.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

n=1000000
pipeline=1
tests="set,get,incr,lpush,rpush,lpop,sadd,hset,zadd,mset"
docdb_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n="$2"; shift 2 ;;
    -P) pipeline="$2"; shift 2 ;;
    -t) tests="$2"; shift 2 ;;
    --docdb-args) docdb_args="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

source "$root/scripts/redis-bench-common.sh"
setup_redis_bench bench-cpu
ticks="$(getconf CLK_TCK)"

# The server's user and system clock ticks so far.
server_ticks() { awk '{ print $14, $15 }' "/proc/$server_pid/stat"; }

# Runs command $2 against a fresh server of kind $1 (redis-aof or docdb), in this shell so
# that the exit trap stops the server if the run is interrupted; sets $rps and $user,
# $system and $client, each µs per request.
measure() {
  local before after
  start_server "$1"
  before="$(server_ticks)"
  # bash's `time` gives redis-benchmark's own user and system seconds.
  { TIMEFORMAT='%U %S'; time redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -n "$n" \
    -r 1000000 -P "$pipeline" -t "$2" --csv >"$work/out.csv" 2>/dev/null; } 2>"$work/time"
  after="$(server_ticks)"
  stop_server
  rps="$(awk -F'","' 'NR == 2 { gsub(/"/, "", $2); print $2 }' "$work/out.csv")"
  read -r rps user system client <<<"$(awk -v b="$before" -v a="$after" -v c="$(cat "$work/time")" \
    -v n="$n" -v t="$ticks" -v r="$rps" 'BEGIN {
      split(b, x, " "); split(a, y, " "); split(c, z, " ")
      printf "%.0f %.2f %.2f %.2f\n", r, (y[1] - x[1]) / t * 1e6 / n,
        (y[2] - x[2]) / t * 1e6 / n, (z[1] + z[2]) * 1e6 / n
    }')"
}

echo "# CPU per request, redis-benchmark -c 50 -n $n -r 1000000 -P $pipeline; $(nproc) CPUs"
echo
echo "Each command alone on a fresh server; µs of CPU per request (user + system for the client)."
echo
echo "| command | Redis rps | Redis user | Redis system | client | docdb rps | docdb user | docdb system | client | docdb/Redis |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for test in ${tests//,/ }; do
  echo "==> $test" >&2
  measure redis-aof "$test"
  redis_row="$rps | $user | $system | $client"
  redis_rps="$rps"
  measure docdb "$test"
  ratio="$(awk -v a="$rps" -v b="$redis_rps" 'BEGIN { printf "%.2f", a / b }')"
  echo "| $test | $redis_row | $rps | $user | $system | $client | $ratio |"
done
