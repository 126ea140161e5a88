# Starts idle processes for bench/scan.sh until the machine holds a target number of processes,
# then waits. Each child dies with its parent (PR_SET_PDEATHSIG, kept across exec), so ending
# this one process — the benchmark's own child — ends them all; every child also ends itself
# after an hour at most.
#
# By default each child runs `sleep` in `/`, like most of a machine's processes: programs that
# are no interpreter, working outside any project. IDLE_KIND=python keeps them as forked
# python3 processes instead (each an interpreter, whose argv a scan must read).
#   python3 bench/idle_procs.py TARGET READY_FILE
import ctypes
import os
import signal
import sys
import time

target, ready = int(sys.argv[1]), sys.argv[2]
python = os.environ.get("IDLE_KIND") == "python"
sleep = "/bin/sleep" if os.path.exists("/bin/sleep") else "/usr/bin/sleep"
signal.alarm(3600)
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1
parent = os.getpid()


def processes():
    return sum(1 for d in os.listdir("/proc") if d.isdigit())


for _ in range(max(0, target - processes())):
    if os.fork() == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent ended before prctl took effect
            os._exit(0)
        if python:
            while True:
                signal.pause()
        os.chdir("/")
        os.execv(sleep, ["sleep", "3600"])
with open(ready + ".tmp", "w") as f:
    f.write(str(processes()))
os.rename(ready + ".tmp", ready)
while True:
    signal.pause()
