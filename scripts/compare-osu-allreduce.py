#!/usr/bin/env python3
"""Checks collbench's MPI_Allreduce times against OSU's osu_allreduce definition on this machine.

Runs, interleaved (the order rotates each repeat), REPEATS times each:
  mpirun -np N osu_allreduce_ref -m MAX -i ITERS -x WARMUP -f -M     (tests/tools: OSU's loop)
  mpirun -np N osu_allreduce_ref ... -t          (the same, with collbench's MPI thread level)
  mpirun -np N collbench run allreduce --algo mpi -a 1 --stat mean -n ITERS -w WARMUP
      --placement out -b 4 -e MAX --no-db --json FILE                  (OSU's "Avg Latency")
and prints, per size, medians over the repeats of
  - OSU's "Avg Latency" and collbench's -a 1 --stat mean (the same definition), their ratio and
    the ratio's range over the repeats;
  - the median over iterations of the per-iteration rank average (the ref's -M column and
    collbench's -a 1 --stat median from the same runs): the same comparison with a statistic that
    preempted iterations on a noisy machine can't drag, against the ref with MPI_Init and with
    MPI_Init_thread(FUNNELED) as collbench calls it;
  - collbench's default statistic (median over iterations of the max over ranks), same runs.
Usage: compare-osu-allreduce.py BUILD_DIR [--repeats 5] [--max 16777216] [--np 2]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--mca",
                "btl_vader_single_copy_mechanism", "none"]


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return done.stdout


def parse_osu(text):
    avg, med = {}, {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        avg[int(fields[0])] = float(fields[1])
        med[int(fields[0])] = float(fields[-2])  # -M: median of rank average, median of rank 0
    return avg, med


def parse_collbench(path):
    with open(path) as f:
        doc = json.load(f)
    mean, med, median_of_max = {}, {}, {}
    for p in doc["points"]:
        if p["status"] != "ok":
            continue
        mean[p["bytes"]] = p["time_us"]
        med[p["bytes"]] = p["summary_us"]["median"]  # samples are rank averages under -a 1
        per_iteration_max = [max(v) for v in zip(*p["rank_samples_us"])]
        median_of_max[p["bytes"]] = statistics.median(per_iteration_max)
    return mean, med, median_of_max


def compare(cb_runs, ref_runs, s):
    cb = statistics.median(run_[s] for run_ in cb_runs)
    ref = statistics.median(run_[s] for run_ in ref_runs)
    ratios = [c[s] / o[s] for c, o in zip(cb_runs, ref_runs)]
    return ref, cb, f"{cb / ref:.2f}", f"{min(ratios):.2f}-{max(ratios):.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max", type=int, default=16 << 20)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    a = ap.parse_args()
    mpirun = [shutil.which("mpirun") or "mpirun"] + MPIRUN_FLAGS + ["-np", str(a.np)]
    osu_cmd = mpirun + [os.path.join(a.build, "tests/tools/osu_allreduce_ref"), "-m", str(a.max),
                        "-i", str(a.iters), "-x", str(a.warmup), "-f", "-M"]
    cb_cmd = mpirun + [os.path.join(a.build, "cli/collbench"), "run", "allreduce", "--algo",
                       "mpi", "-a", "1", "--stat", "mean", "-n", str(a.iters), "-w",
                       str(a.warmup), "--placement", "out", "-b", "4", "-e", str(a.max),
                       "--no-db", "--format", "none"]
    print("# OSU:       " + " ".join(osu_cmd))
    print("# OSU -t:    " + " ".join(osu_cmd + ["-t"]))
    print("# collbench: " + " ".join(cb_cmd) + " --json FILE")
    res = {k: [] for k in ("osu_avg", "osu_med", "osut_avg", "osut_med", "cb_avg", "cb_med",
                           "cb_max")}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            path = os.path.join(tmp, f"cb{r}.json")
            steps = [("osu", osu_cmd), ("osut", osu_cmd + ["-t"]),
                     ("cb", cb_cmd + ["--json", path])]
            steps = steps[r % 3:] + steps[:r % 3]  # rotate which tool runs first
            for name, cmd in steps:
                print(f"# repeat {r + 1}/{a.repeats}: {name}", file=sys.stderr, flush=True)
                text = run(cmd)
                if name == "cb":
                    values = parse_collbench(path)
                    keys = ("cb_avg", "cb_med", "cb_max")
                else:
                    values = parse_osu(text)
                    keys = (name + "_avg", name + "_med")
                for key, v in zip(keys, values):
                    res[key].append(v)
    sizes = sorted(set(res["osu_avg"][0]) & set(res["cb_avg"][0]))
    print(f"# {a.repeats} interleaved repeats; medians over the repeats; times in us")
    print("| size (B) | OSU avg | collbench mean | ratio | range "
          "| ref median | collbench median | ratio | range "
          "| ref -t median | ratio | range | collbench default |")
    print("|---:" * 13 + "|")
    for s in sizes:
        o_avg, c_avg, r1, g1 = compare(res["cb_avg"], res["osu_avg"], s)
        o_med, c_med, r2, g2 = compare(res["cb_med"], res["osu_med"], s)
        t_med, _, r3, g3 = compare(res["cb_med"], res["osut_med"], s)
        mx = statistics.median(run_[s] for run_ in res["cb_max"])
        print(f"| {s} | {o_avg:.2f} | {c_avg:.2f} | {r1} | {g1} | {o_med:.2f} | {c_med:.2f} "
              f"| {r2} | {g2} | {t_med:.2f} | {r3} | {g3} | {mx:.2f} |")


if __name__ == "__main__":
    main()
