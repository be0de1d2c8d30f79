#!/usr/bin/env python3
"""Checks collbench's MPI_Allreduce times against OSU's osu_allreduce on this machine.

Runs, interleaved (the order rotates each repeat), REPEATS times each, for every size range:
  mpirun -np N OSU -m MIN:MAX -i ITERS -x WARMUP [-T mpi_float]
                                  (--osu PATH: OMB 7.x's osu_allreduce, float as collbench;
                                   else tests/tools/osu_allreduce_ref, which uses float)
  mpirun -np N collbench run allreduce --algo mpi --timing osu -n ITERS -w WARMUP
      --placement out -b MIN -e MAX --no-db --json FILE    (OSU's loop and "Avg Latency")
  mpirun -np N collbench run allreduce --algo mpi ... --json FILE   (collbench's default timing)
and prints, per size, the medians over the repeats of OSU's "Avg Latency(us)" and collbench's
OSU-mode time (the same definition), their ratio and the ratio's range over the repeats, and
collbench's default figure (median over iterations of the slowest rank, per-call loop).
--rank-prefix runs each rank under a command, e.g. "chrt -f 5" (real-time priority: on a shared
machine the means then measure the benchmark, not the neighbours); keep each run under ~0.9 s
(one size per range for the large ones) and --pause between runs, or Linux's real-time
throttling stalls an iteration for 50 ms.
Usage: compare-osu-allreduce.py BUILD_DIR [--osu PATH] [--repeats 3] [--np 2]
       [--ranges 8:8192:10000:1000,16384:16777216:200:20] [--rank-prefix CMD]
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--mca",
                "btl_vader_single_copy_mechanism", "none"]


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return done.stdout


def parse_osu(text):
    avg = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        avg[int(fields[0])] = float(fields[1])
    return avg


def parse_collbench(path):
    with open(path) as f:
        doc = json.load(f)
    return {p["bytes"]: p["time_us"] for p in doc["points"] if p["status"] == "ok"}


def ranges(text):
    out = []
    for item in text.split(","):
        lo, hi, iters, warm = (int(x) for x in item.split(":"))
        out.append((lo, hi, iters, warm))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--osu", help="OMB's osu_allreduce (default: tests/tools/osu_allreduce_ref)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--ranges", type=ranges,
                    default=ranges("8:8192:10000:1000,16384:16777216:200:20"),
                    help="MIN:MAX:ITERS:WARMUP,... (bytes, timed and warm-up iterations)")
    ap.add_argument("--rank-prefix", default="", help="command each rank runs under")
    ap.add_argument("--raw", help="also write every repeat's figure per tool and size (JSON)")
    ap.add_argument("--no-default", action="store_true",
                    help="skip collbench's default-mode runs (a third less time)")
    ap.add_argument("--pause", type=float, default=0,
                    help="seconds to sleep before each run (real-time ranks: Linux throttles "
                         "real-time tasks that run more than 0.95 s of every second, and a run "
                         "that spans the throttle gets a 50 ms stall in one iteration)")
    a = ap.parse_args()
    mpirun = [shutil.which("mpirun") or "mpirun"] + MPIRUN_FLAGS + ["-np", str(a.np)]
    mpirun += shlex.split(a.rank_prefix)
    osu = a.osu or os.path.join(a.build, "tests/tools/osu_allreduce_ref")
    cb = os.path.join(a.build, "cli/collbench")
    res = {"osu": {}, "cb_osu": {}, "cb_default": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for lo, hi, iters, warm in a.ranges:
            osu_cmd = mpirun + [osu, "-m", f"{lo}:{hi}", "-i", str(iters), "-x", str(warm)]
            if a.osu:
                osu_cmd += ["-T", "mpi_float"]  # OMB 7.x defaults to MPI_CHAR; collbench: float
            cb_cmd = mpirun + [cb, "run", "allreduce", "--algo", "mpi", "-n", str(iters), "-w",
                               str(warm), "--placement", "out", "-b", str(lo), "-e", str(hi),
                               "--no-db", "--format", "none", "-c", "0"]
            print("# OSU:                " + " ".join(osu_cmd))
            print("# collbench osu mode: " + " ".join(cb_cmd) + " --timing osu --json FILE")
            print("# collbench default:  " + " ".join(cb_cmd) + " --json FILE")
            for r in range(a.repeats):
                steps = [("osu", osu_cmd), ("cb_osu", cb_cmd + ["--timing", "osu"])]
                if not a.no_default:
                    steps.append(("cb_default", cb_cmd))
                k = r % len(steps)
                steps = steps[k:] + steps[:k]  # rotate which tool runs first
                for name, cmd in steps:
                    print(f"# {lo}-{hi}: repeat {r + 1}/{a.repeats}: {name}", file=sys.stderr,
                          flush=True)
                    time.sleep(a.pause)
                    if name == "osu":
                        values = parse_osu(run(cmd))
                    else:
                        path = os.path.join(tmp, f"{name}.json")
                        run(cmd + ["--json", path])
                        values = parse_collbench(path)
                    for s, v in values.items():
                        res[name].setdefault(s, []).append(v)
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump(res, f, indent=1)
    sizes = sorted(s for s in res["osu"] if s in res["cb_osu"])
    print(f"# {a.repeats} interleaved repeats; medians over the repeats; times in us")
    print("| size (B) | OSU avg | collbench --timing osu | ratio | range | collbench default |")
    print("|---:" * 6 + "|")
    worst = 0.0
    for s in sizes:
        o, c = res["osu"][s], res["cb_osu"][s]
        ratios = [x / y for x, y in zip(c, o)]
        ratio = statistics.median(c) / statistics.median(o)
        worst = max(worst, abs(ratio - 1))
        d = statistics.median(res["cb_default"][s]) if s in res["cb_default"] else float("nan")
        print(f"| {s} | {statistics.median(o):.2f} | {statistics.median(c):.2f} | {ratio:.2f} "
              f"| {min(ratios):.2f}-{max(ratios):.2f} | {d:.2f} |")
    print(f"# largest |ratio - 1| over sizes: {worst:.3f}")


if __name__ == "__main__":
    main()
