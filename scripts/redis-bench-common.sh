#!/usr/bin/env bash
# Shared by the Redis benchmark scripts (sourced): the release build, Redis's tools installed
# if missing, a temporary work directory, and the server started there stopped on exit.

source "$(dirname "${BASH_SOURCE[0]}")/prereqs.sh"

# Builds docdb (setting $docdb), installs Redis's tools and makes $work (named after $1).
setup_redis_bench() {
  ensure_build_prereqs
  # Same package selection as the test command, so the RocksDB build is shared.
  (cd "$(dirname "${BASH_SOURCE[0]}")/.." && cargo build --release --quiet --workspace --all-targets)
  docdb="$CARGO_TARGET_DIR/release/docdb"
  ensure_redis_tools
  make_work_dir "$1"
}

ensure_redis_tools() {
  if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null \
    || ! command -v redis-cli >/dev/null; then
    echo "==> installing redis-server and redis-tools" >&2
    apt_install redis-server redis-tools \
      || { echo "error: redis-server/redis-benchmark missing and apt-get failed" >&2; exit 1; }
  fi
}

# Makes $work (a temporary directory named after $1) and, on exit, kills the server whose pid
# is in $server_pid, if any, and removes $work.
make_work_dir() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
  server_pid=""
  trap remove_work_dir EXIT
  trap 'exit 130' INT TERM
}

remove_work_dir() {
  if [ -n "$server_pid" ]; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}

# A free loopback TCP port.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until the server on port $1 answers PING (up to 30 s).
wait_ready() {
  local i
  for i in $(seq 300); do
    if [ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "error: the server exited at startup (log: $2)" >&2; cat "$2" >&2; return 1
    fi
    sleep 0.1
  done
  echo "error: no PONG from port $1 within 30 s" >&2
  return 1
}

# Starts server $1 (redis-aof, redis-plain or docdb, the last with the flags in $docdb_args)
# over a fresh directory in $work; sets $port and $server_pid.
start_server() {
  local kind="$1" dir log
  dir="$(mktemp -d "$work/$kind.XXXXXX")"
  log="$dir.log"
  port="$(free_port)"
  case "$kind" in
    redis-aof | redis-plain)
      local aof=no
      [ "$kind" = redis-aof ] && aof=yes
      redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" \
        --appendonly "$aof" --appendfsync everysec --daemonize no >"$log" 2>&1 &
      ;;
    docdb)
      # shellcheck disable=SC2086 # the extra flags split into words
      "$docdb" serve --data-dir "$dir" --listen "127.0.0.1:$port" --metrics-listen off \
        --fsync everysec $docdb_args >"$log" 2>&1 &
      ;;
  esac
  server_pid=$!
  wait_ready "$port" "$log"
}

# Graceful stop (SIGTERM), then waits for the exit.
stop_server() {
  kill -TERM "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
