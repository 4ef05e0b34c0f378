#!/usr/bin/env bash
# Installs what building and testing DocDB needs and is missing. Sourced by the other scripts.
# Safe to run repeatedly: each step checks first.

# One target directory outside the clone, so a fresh clone reuses the RocksDB C++ build
# (about 30 minutes on 2 cores the first time).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/docdb-target}"
mkdir -p "$CARGO_TARGET_DIR"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_updated=""
apt_install() {
  command -v apt-get >/dev/null || return 1
  if [ -z "$apt_updated" ]; then
    as_root apt-get update -qq >/dev/null 2>&1 || true
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# bindgen loads libclang's C library (libclang.so or libclang-N.so). libclang-cpp.so, which
# other packages install alone, is a different library and does not count.
have_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null \
    || compgen -G '/usr/lib/*/libclang.so*' >/dev/null \
    || compgen -G '/usr/lib/*/libclang-[0-9]*.so*' >/dev/null
}

# The rocksdb crate generates its bindings with bindgen, which loads libclang at build time.
ensure_libclang() {
  have_libclang && return 0
  echo "==> installing libclang (needed by the rocksdb crate's bindgen)" >&2
  if apt_install libclang-dev && have_libclang; then return 0; fi
  echo "==> apt-get failed; falling back to PyPI's libclang wheel" >&2
  python3 -m pip install --quiet --user libclang
  local dir
  dir=$(python3 -c 'import clang, os; print(os.path.join(os.path.dirname(clang.__file__), "native"))')
  export LIBCLANG_PATH="$dir"
}

# A C++ compiler for RocksDB itself.
ensure_cxx() {
  command -v c++ >/dev/null && return 0
  echo "==> installing a C++ compiler" >&2
  apt_install g++ || { echo "error: no C++ compiler and apt-get failed" >&2; return 1; }
}

ensure_build_prereqs() {
  ensure_cxx && ensure_libclang
}

# The Redis peers the server's tests compare against: redis-server, redis-cli and
# redis-benchmark (Debian's redis-server and redis-tools).
ensure_redis_tools() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null \
    && command -v redis-benchmark >/dev/null && return 0
  echo "==> installing redis-server and redis-tools (the Redis tests' real peers)" >&2
  apt_install redis-server redis-tools || { echo "error: cannot install redis-server/redis-tools" >&2; return 1; }
  # Debian starts a system redis on 6379; the tests start their own on free ports.
  if command -v systemctl >/dev/null; then as_root systemctl stop redis-server >/dev/null 2>&1 || true; fi
}
