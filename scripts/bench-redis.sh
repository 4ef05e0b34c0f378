#!/usr/bin/env bash
# Compares `docdb serve` with redis-server under redis-benchmark, without pipelining and with
# -P 16, and prints markdown tables of requests per second; then what RocksDB alone does of
# each command (`docdb-bench redis-floor`), the bound on what docdb can reach.
#
#   scripts/bench-redis.sh [-n N] [--redis-mode aof|plain|both] [-c CLIENTS] [--rounds R]
#                          [--pipelines "1 16"] [--docdb-args "FLAGS"]
#
# -n N            requests per command (default $BENCH_N or 1000000; 100000 is a quick run)
# --redis-mode    aof (default): redis-server with appendonly yes, appendfsync everysec, no RDB
#                 saves, the durable peer of `docdb serve --fsync everysec`; plain: no
#                 persistence at all; both: one column each.
# -c CLIENTS      concurrent connections (default 50)
# --rounds R      runs of every server per pipeline, alternated (Redis, docdb, Redis, ...);
#                 the tables give each command's median over the rounds (default 1)
# --pipelines P   the pipeline depths to run (default "1 16")
# --docdb-args F  extra `docdb serve` flags, e.g. "--threads 2 --writer-thread on"
#
# Every server starts on a free loopback port over a fresh temporary directory, one per run,
# and is stopped when the run ends (and on exit, whatever happens).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

n="${BENCH_N:-1000000}"
redis_mode=aof
clients=50
tests="set,get,incr,lpush,rpush,lpop,sadd,hset,zadd,mset"
rounds=1
pipelines="1 16"
docdb_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n="$2"; shift 2 ;;
    -c) clients="$2"; shift 2 ;;
    --redis-mode) redis_mode="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --pipelines) pipelines="$2"; shift 2 ;;
    --docdb-args) docdb_args="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$redis_mode" in
  aof) redis_kinds=(aof) ;;
  plain) redis_kinds=(plain) ;;
  both) redis_kinds=(aof plain) ;;
  *) echo "error: --redis-mode is aof, plain or both" >&2; exit 2 ;;
esac

source "$root/scripts/redis-bench-common.sh"
setup_redis_bench bench-redis

# Runs redis-benchmark against a fresh server $1 with pipeline $2 (round $3); writes
# `COMMAND,rps` lines to $work/$1-P$2.$3.csv.
run() {
  local kind="$1" pipeline="$2" out="$work/$1-P$2.$3.csv"
  echo "==> $kind, -P $pipeline, -n $n, round $3 of $rounds" >&2
  start_server "$kind"
  redis-benchmark -h 127.0.0.1 -p "$port" -c "$clients" -n "$n" -r 1000000 -P "$pipeline" \
    -t "$tests" --csv 2>>"$work/benchmark.log" \
    | awk -F'","' 'NR > 1 { gsub(/"/, "", $1); gsub(/"/, "", $2); print $1 "," $2 }' >"$out"
  stop_server
}

kinds=()
for k in "${redis_kinds[@]}"; do kinds+=("redis-$k"); done
kinds+=(docdb)
for pipeline in $pipelines; do
  for round in $(seq "$rounds"); do
    for kind in "${kinds[@]}"; do run "$kind" "$pipeline" "$round"; done
  done
done
# RocksDB alone: one write per command without pipelining (the server, with --group-writes
# on, now lands a turn's writes of many connections together, so it can beat this); with it,
# up to 256 commands per write, as the server's writer thread groups them.
floor_batch() { if [ "$1" = 1 ]; then echo 1; else echo 256; fi; }
for pipeline in $pipelines; do
  echo "==> RocksDB alone (docdb-bench redis-floor), -n $n, --batch $(floor_batch "$pipeline")" >&2
  rm -rf "$work/floor"
  "$CARGO_TARGET_DIR/release/docdb-bench" redis-floor -n "$n" -r 1000000 -t "$tests" \
    --batch "$(floor_batch "$pipeline")" --dir "$work/floor" >"$work/floor-P$pipeline.csv"
done

# The median over the rounds of command $3's rps against server $1 at pipeline $2.
rps() {
  { cat "$work/$1-P$2".*.csv 2>/dev/null || true; } | awk -F, -v c="$3" '$1 == c { print $2 }' | sort -g \
    | awk '{ v[NR] = $1 } END { if (NR) printf "%.0f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "# docdb serve vs redis-server ($(redis-server --version | awk '{ print $3 }' | sed 's/v=//'))"
echo
echo "redis-benchmark -c $clients -n $n -r 1000000 -t $tests; $(nproc) CPUs;"
echo "docdb serve --fsync everysec $docdb_args; medians of $rounds alternated round(s)."
echo "Redis: aof = appendonly yes, appendfsync everysec, save \"\"; plain = no persistence."
for pipeline in $pipelines; do
  echo
  if [ "$pipeline" = 1 ]; then echo "## No pipelining"; else echo "## Pipeline -P $pipeline"; fi
  echo
  header="| command |"
  rule="|---|"
  for k in "${redis_kinds[@]}"; do header+=" Redis ($k) rps |"; rule+="---:|"; done
  header+=" docdb rps |"
  rule+="---:|"
  for k in "${redis_kinds[@]}"; do header+=" docdb/Redis ($k) |"; rule+="---:|"; done
  echo "$header"
  echo "$rule"
  while IFS=, read -r command _; do
    row="| $command |"
    d="$(rps docdb "$pipeline" "$command")"
    for k in "${redis_kinds[@]}"; do
      r="$(rps "redis-$k" "$pipeline" "$command")"
      row+=" ${r:--} |"
    done
    row+=" ${d:--} |"
    for k in "${redis_kinds[@]}"; do
      r="$(rps "redis-$k" "$pipeline" "$command")"
      row+=" $(ratio "${d:-0}" "${r:-0}") |"
    done
    echo "$row"
  done <"$work/redis-${redis_kinds[0]}-P$pipeline.1.csv"
done

echo
echo "## RocksDB alone: the bound on docdb"
echo
echo "\`docdb-bench redis-floor -n $n -r 1000000 --batch B\`: the RocksDB seeks and puts docdb cannot"
echo "avoid for each command in its format, on one thread, with no network, parsing or DocDB work"
echo "(see crates/bench/src/redis_floor.rs); B commands per write: 1 without pipelining, 256 with it."
for pipeline in $pipelines; do
  echo
  echo "### -P $pipeline (--batch $(floor_batch "$pipeline"))"
  echo
  echo "| command | RocksDB alone rps | RocksDB alone / Redis ${redis_kinds[0]} | docdb / RocksDB alone |"
  echo "|---|---:|---:|---:|"
  while IFS=, read -r command floor; do
    r="$(rps "redis-${redis_kinds[0]}" "$pipeline" "$command")"
    d="$(rps docdb "$pipeline" "$command")"
    echo "| $command | $floor | $(ratio "$floor" "${r:-0}") | $(ratio "${d:-0}" "$floor") |"
  done <"$work/floor-P$pipeline.csv"
done
