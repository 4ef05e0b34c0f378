#!/usr/bin/env python3
"""Round trip of single SETs on a connection that pipelined first.

    python3 scripts/bench-after-pipelining.py PORT [N]

Connects to a `docdb serve` (or any Redis server) on 127.0.0.1:PORT, sends 40 writes of 16
pipelined SETs (enough for docdb to judge the connection pipelining, see
crates/redis/src/lanes.rs), then N single SETs one at a time (default 20000), each waiting
for its reply, and prints the mean time per SET. The figure includes this client's own
cost; compare binaries in the same run.
"""
import socket
import sys
import time


def command(*args):
    out = b"*%d\r\n" % len(args)
    for arg in args:
        arg = arg.encode()
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def read_replies(sock, count):
    """Reads until `count` simple replies (one line each, as SET's +OK) have arrived."""
    buf = b""
    while buf.count(b"\r\n") < count:
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit("the server closed the connection")
        buf += chunk
    if not buf.startswith(b"+OK"):
        sys.exit("unexpected reply: %r" % buf[:80])


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for round_ in range(40):
        batch = b"".join(command("SET", "p:%d:%d" % (round_, i), "v") for i in range(16))
        sock.sendall(batch)
        read_replies(sock, 16)
    started = time.perf_counter()
    for i in range(n):
        sock.sendall(command("SET", "k:%d" % i, "v"))
        read_replies(sock, 1)
    elapsed = time.perf_counter() - started
    print("%.1f us per SET after pipelining (%d SETs)" % (elapsed / n * 1e6, n))


if __name__ == "__main__":
    main()
