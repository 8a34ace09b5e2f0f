"""A ProxyCommand for tests (no nc on the test machine): relays stdin/stdout <-> HOST:PORT.

Usage: python3 stdio_relay.py HOST PORT
"""

from __future__ import annotations

import os
import selectors
import socket
import sys


def main() -> int:
    sock = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    sel = selectors.DefaultSelector()
    stdin = sys.stdin.fileno()
    stdout = sys.stdout.fileno()
    sel.register(stdin, selectors.EVENT_READ, "in")
    sel.register(sock, selectors.EVENT_READ, "sock")
    while True:
        for key, _ in sel.select():
            if key.data == "in":
                data = os.read(stdin, 65536)
                if not data:
                    return 0
                sock.sendall(data)
            else:
                data = sock.recv(65536)
                if not data:
                    return 0
                os.write(stdout, data)


if __name__ == "__main__":
    sys.exit(main())
