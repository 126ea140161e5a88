# Measures processes over a window for bench/auto.sh: CPU time (utime + stime + cutime + cstime
# from /proc/PID/stat) over wall time, and memory (VmRSS and Pss sampled every second: their
# average; VmHWM at the end: the peak RSS). A target given as PID:FILE is a `pier watch --json`
# writing FILE: its window runs from the first rescan line written after the start to the last
# one written before the end, so it holds whole rescans only, and the CPU per rescan is exact
# to a clock tick. A plain PID's window is the whole window.
#   python3 bench/proc_window.py SECS NAME=PID[:FILE]...
# Prints one JSON object: {NAME: {cpu_s, wall_s, rescans, rss_kb, pss_kb, hwm_kb}}.
import json
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the name: state is field 3, so utime..cstime (14..17) are [11:15].
    return sum(int(x) for x in fields[11:15])


def memory(pid):
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                got[key] = int(value.split()[0])
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                got["Pss"] = int(line.split()[1])
    return got


def rescans(path):
    with open(path, "rb") as f:
        return sum(1 for line in f if b'"event":"rescan"' in line)


class Target:
    def __init__(self, spec):
        self.name, _, rest = spec.partition("=")
        pid, _, self.file = rest.partition(":")
        self.pid = int(pid)
        self.marks = []  # (time, ticks, rescans) at each rescan line seen
        self.mem = []
        self.count = rescans(self.file) if self.file else None

    def poll(self, now):
        if not self.file:
            return
        count = rescans(self.file)
        if count != self.count:
            self.count = count
            self.marks.append((now, ticks(self.pid), count))


def main():
    secs = float(sys.argv[1])
    targets = [Target(spec) for spec in sys.argv[2:]]
    start = time.monotonic()
    begin = {t.name: ticks(t.pid) for t in targets}
    next_sample = start
    while (now := time.monotonic()) < start + secs:
        for t in targets:
            t.poll(now)
            if now >= next_sample:
                t.mem.append(memory(t.pid))
        if now >= next_sample:
            next_sample += 1.0
        time.sleep(0.05)  # the poll's period, not a synchronisation
    end = time.monotonic()
    out = {}
    for t in targets:
        if t.file:
            if len(t.marks) < 2:
                sys.exit(f"proc_window: {t.name} wrote fewer than 2 rescans in {secs} s")
            (t0, c0, n0), (t1, c1, n1) = t.marks[0], t.marks[-1]
            cpu, wall, n = c1 - c0, t1 - t0, n1 - n0
        else:
            cpu, wall, n = ticks(t.pid) - begin[t.name], end - start, None
        avg = lambda k: sum(m[k] for m in t.mem) / len(t.mem)
        out[t.name] = {"cpu_s": cpu / HZ, "wall_s": wall, "rescans": n, "rss_kb": avg("VmRSS"),
                       "pss_kb": avg("Pss"), "hwm_kb": memory(t.pid)["VmHWM"]}
    print(json.dumps(out))


main()
