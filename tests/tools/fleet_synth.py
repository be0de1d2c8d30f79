#!/usr/bin/env python3
"""A synthetic fleet of per-node nccl-tests logs built from one real log (tests/cli/fleet.sh).

Every node is the real log with its host renamed node01..nodeNN and each row's time scaled; the
row's algbw and busbw are printed again from the new time as nccl-tests prints them, so the
importer's checks hold. Per point (size and placement) every node gets a multiplicative noise of
sigma NOISE, the run-to-run spread of the real log itself (the robust spread of log(in-place /
out-of-place busbw) over its sizes from 1 MiB, divided by sqrt 2); the NOISY nodes get NOISY_X
times that. The SLOW nodes are slowed by a factor drawn from 10-25% over a band of 3 to 8
consecutive sizes from 1 MiB (both placements: a slow node is slow whatever the buffers).

Usage: fleet_synth.py LOG OUTDIR SEED  -> writes OUTDIR/nodeNN.txt, prints "slow: a b" and
"noisy: c d" and "sigma: s".
"""
import math
import os
import random
import re
import statistics
import sys

NODES, SLOW, NOISY, NOISY_X = 16, 2, 2, 8
MIN_BYTES = 1 << 20
ROW = re.compile(r"^\s*\d+\s+\d+\s+\w+\s+\w+\s")


def fmt_time(us):
    # nccl-tests: %7.2f below 100 us, %7.1f below 10 ms, %7.0f above
    return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def main():
    log, outdir, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lines = open(log).read().splitlines()
    # The out-of-place time's column: after size, count, type, redop (and root since 2022).
    t0 = 5 if any(l.startswith("#") and " root " in l for l in lines) else 4
    ranks = sum(1 for l in lines if re.search(r"Rank\s+\d+ .* device ", l))
    factor = 2 * (ranks - 1) / ranks  # allreduce
    rows = [l for l in lines if ROW.match(l)]
    logs = []
    for l in rows:
        p = l.split()
        if int(p[0]) >= MIN_BYTES and float(p[t0 + 2]) > 0 and float(p[t0 + 6]) > 0:
            logs.append(math.log(float(p[t0 + 6]) / float(p[t0 + 2])))
    med = statistics.median(logs)
    sigma = 1.4826 * statistics.median(abs(x - med) for x in logs) / math.sqrt(2)
    rng = random.Random(seed)
    names = [f"node{i + 1:02d}" for i in range(NODES)]
    picked = rng.sample(names, SLOW + NOISY)
    slow, noisy = sorted(picked[:SLOW]), sorted(picked[SLOW:])
    big = [int(l.split()[0]) for l in rows if int(l.split()[0]) >= MIN_BYTES]
    host = re.search(r" on (\S+) device", "\n".join(lines)).group(1)
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        bands = {}
        if name in slow:
            length = rng.randint(3, min(8, len(big)))
            start = rng.randint(0, len(big) - length)
            f = 1 - rng.uniform(0.10, 0.25)
            bands = {b: f for b in big[start:start + length]}
        s = sigma * (NOISY_X if name in noisy else 1)
        out = []
        for l in lines:
            if not ROW.match(l):
                out.append(l.replace(f" on {host} device", f" on {name} device"))
                continue
            p = l.split()
            size = int(p[0])
            cols = []
            for t_i in (t0, t0 + 4):  # out-of-place and in-place time
                slowdown = bands.get(size, 1.0)
                speed = slowdown * math.exp(rng.gauss(0, s)) if size >= MIN_BYTES else 1.0
                t = float(p[t_i]) / speed
                algbw = size / (t * 1e3)
                cols.append((fmt_time(t), f"{algbw:7.2f}", f"{algbw * factor:7.2f}", p[t_i + 3]))
            out.append("  ".join(f"{x:>8}" for x in p[:t0]) + "  " +
                       "  ".join(f"{a} {b} {c} {w:>6}" for a, b, c, w in cols))
        with open(os.path.join(outdir, f"{name}.txt"), "w") as fh:
            fh.write("\n".join(out) + "\n")
    print("slow:", " ".join(slow))
    print("noisy:", " ".join(noisy))
    print(f"sigma: {sigma:.4f}")


if __name__ == "__main__":
    main()
