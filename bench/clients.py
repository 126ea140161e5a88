# Holds K TCP connections to the given ports, round-robin, for bench/scan.sh: one process, K
# sockets, so the connections cost no processes. Writes READY_FILE once all are connected.
#   python3 bench/clients.py K READY_FILE PORT...
import signal
import socket
import sys

signal.alarm(600)
k, ready, ports = int(sys.argv[1]), sys.argv[2], [int(p) for p in sys.argv[3:]]
held = [socket.create_connection(("127.0.0.1", ports[i % len(ports)])) for i in range(k)]
with open(ready + ".tmp", "w") as f:
    f.write(str(len(held)))
import os
os.rename(ready + ".tmp", ready)
while True:
    signal.pause()
