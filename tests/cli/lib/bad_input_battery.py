#!/usr/bin/env python3
"""The generated bad-input battery (issue #27 item 4), run by tests/cli/bad_inputs.sh.

Cases come from tables, not from hand-picked command lines: for every numeric option of every
subcommand, the values that mean nothing for it (negative, nan, inf, 1e-300, 2^63, overflow,
trailing garbage, empty; zero where zero means nothing); for every size option the same plus unit
overflow; for every file option a missing file, a directory, an empty and a binary file; for
every list option an empty element; control characters in labels; model JSON with bad fields.
A few cases that need a hand-made setting (foreign databases, dates, ...) come last, with the
text their line must contain.

Every case must: exit 2, print exactly one line on stderr starting "collbench: ", print nothing
on stdout, leave the database byte-identical, and leave nothing new in /dev/shm. Each case starts
from a valid, cheap command line, so a case that is wrongly accepted runs a tiny measurement and
is reported, instead of hanging the battery.

Usage: bad_input_battery.py COLLBENCH SOURCE_DIR SCRATCH_DIR  (prints one line per failure and a
summary; exit 1 on any failure).
"""
import hashlib
import json
import os
import subprocess
import sys

cb, src, tmp = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
db = os.path.join(tmp, "x.db")
samples = os.path.join(src, "tests", "data", "samples")
nccl_log = os.path.join(samples, "nccltests_6_2080ti-pcie-nop2p-2gpu-g2-allreduce.txt")
resnet_trace = os.path.join(src, "tests", "data", "traces", "pytorch-et",
                            "param-resnet-ddp-2rank", "resnet_2gpu_et.json.gz")

# Files for the file options.
missing = os.path.join(tmp, "no-such-file")
directory = os.path.join(tmp, "a-directory")
empty = os.path.join(tmp, "empty.txt")
binary = os.path.join(tmp, "binary.bin")
os.makedirs(directory, exist_ok=True)
open(empty, "wb").close()
with open(binary, "wb") as f:
    f.write(bytes(range(256)) * 16)
BAD_FILES = [missing, directory, empty, binary]

# Base command lines: valid and cheap (tiny sizes, few iterations, two ranks).
RUN = ["run", "allreduce", "--np", "2", "-b", "64", "-e", "64", "-n", "1", "-w", "0",
       "--algo", "ring", "--db", db]
P2P = ["p2p", "latency", "--np", "2", "-b", "8", "-e", "8", "-n", "2", "-w", "0",
       "--transport", "local", "--db", db]
CUSTOM = ["--model", "custom", "--blocks", "1", "--hidden", "64", "--heads", "2", "--seq", "8",
          "--vocab", "0"]
PROXY = {m: ["proxy", m, "--np", "2", "--steps", "1", "-w", "0", "--db", db] + CUSTOM
         for m in ("dp", "pp", "tp", "ps")}
PROXY["hybrid"] = ["proxy", "hybrid", "--np", "2", "--dp", "2", "--steps", "1", "-w", "0",
                   "--db", db] + CUSTOM
DIAG_COMMON = ["--np", "2", "--db", db, "--transport", "local"]
DIAG = {
    "links": ["diag", "links"] + DIAG_COMMON + ["--size", "1K", "--latency-iters", "2", "-n", "1",
                                                "-W", "1", "--schedules", "1"],
    "ranks": ["diag", "ranks"] + DIAG_COMMON + ["--size", "1K", "-n", "2", "-w", "0"],
    "bisect": ["diag", "bisect"] + DIAG_COMMON + ["--size", "1K", "--coll-size", "1K",
                                                  "--calls", "1", "--repeats", "1"],
}
REPLAY = ["replay", resnet_trace, "--np", "2", "-n", "1", "-w", "0", "--db", db]

# Values that no numeric option takes. "zero" and "tiny" only where they mean nothing.
INT_BAD = ["-1", "-9223372036854775808", "9223372036854775808", "99999999999999999999", "5abc",
           "", "1.5", "nan", "0x", " "]
FLOAT_BAD = ["-1", "nan", "-nan", "inf", "-inf", "1e999", "5abc", "", "0x1p", "1,5"]
SIZE_BAD = ["-1", "", "5abc", "1.5", "9223372036854775808", "99999999999999999999", "16E",
            "99999999999P", "nan", "1K1", "K"]

cases = []  # (argv, text the line must contain or "")


def with_opt(base, flag, value):
    """base with flag set to value: replaced where base gives it (CLI11 refuses a repeated
    option, which would hide the value under test), else appended."""
    argv = list(base)
    if flag in argv:
        argv[argv.index(flag) + 1] = value
        return argv
    return argv + [flag, value]


def numeric(base, flag, kind, zero_bad=True, tiny_bad=False):
    values = {"int": INT_BAD, "float": FLOAT_BAD, "size": SIZE_BAD}[kind]
    for v in values:
        cases.append((with_opt(base, flag, v), ""))
    if zero_bad:
        cases.append((with_opt(base, flag, "0"), ""))
    if tiny_bad and kind == "float":
        cases.append((with_opt(base, flag, "1e-300"), ""))


def files(base, flag=None):
    for f in BAD_FILES:
        cases.append((with_opt(base, flag, f) if flag else base + [f], ""))


def list_elements(base, flag, good):
    for v in [good + ",", "," + good, good + ",," + good, ",", ""]:
        cases.append((with_opt(base, flag, v), ""))


def labels(base, flag="--label"):
    for v in ["two\nlines", "tab\there", "bell\a", "esc\x1b[31mred", "del\x7f", "x" * 201,
              "bad\udcff\udcfebytes"]:
        cases.append((with_opt(base, flag, v), ""))


# ---- run
for flag, kind, zero_bad in [("-n", "int", True), ("-w", "int", False), ("-c", "int", False),
                             ("-r", "int", False), ("-N", "int", True), ("-a", "int", False),
                             ("-z", "int", False), ("-G", "int", False), ("-R", "int", False),
                             ("--ranks-per-node", "int", True), ("--np", "int", True),
                             ("-b", "size", False), ("-e", "size", True), ("-i", "size", True),
                             ("--chunk", "size", True), ("--zero-copy", "size", False)]:
    numeric(RUN, flag, kind, zero_bad)
for flag in ["-f", "-T"]:
    numeric(RUN, flag, "float", True, True)
for v in ["-1", "nan", "inf", "5abc", "", "0", "1e999", "-5:ring", "5:"]:
    cases.append((RUN + ["--inject-delay", v], ""))
for v in ["-1ms", "0", "0ms", "nan", "infs", "5abc", "", "1e999s"]:
    cases.append((RUN + ["--time-budget", v], ""))
list_elements(RUN, "--algo", "ring")
list_elements(RUN, "-d", "float")
list_elements(RUN, "-o", "sum")
labels(RUN)
cases.append((RUN + ["--ranks-per-node", "3"], "--ranks-per-node"))
cases.append((["run", "allreduce,", "--np", "2", "-b", "64", "-e", "64", "--db", db], ""))
cases.append((["run", ",", "--np", "2", "-b", "64", "-e", "64", "--db", db], ""))
cases.append((RUN[:4] + ["-b", "9223372036854775807", "-e", "9223372036854775807"] + RUN[8:], ""))
cases.append((RUN[:4] + ["-b", "8E", "-e", "8E"] + RUN[8:], ""))
for f in [directory, missing + "/x.json"]:
    cases.append((RUN + ["--json", f], ""))
    cases.append((RUN + ["--csv", f], ""))

# ---- p2p
for flag, kind, zero_bad in [("-n", "int", True), ("-w", "int", False), ("-W", "int", True),
                             ("--np", "int", True), ("-b", "size", False), ("-e", "size", True),
                             ("--matrix-size", "size", True)]:
    numeric(P2P, flag, kind, zero_bad)
for flag in ["-f", "-T"]:
    numeric(P2P, flag, "float", True, True)
for v in ["0,0", "0,5", "-1,0", "0,", ",1", "0", "a,b", "0,1,2"]:
    cases.append((P2P + ["--pair", v], ""))
list_elements(P2P, "--transport", "local")
labels(P2P)

# ---- list
for flag in ["--np", "--ranks-per-node"]:
    numeric(["list", "--np", "2"], flag, "int")

# ---- proxy
# Every mode parses the same options (cli/ProxyCommand.cpp): all values for dp, two per option for
# the others.
for mode, base in PROXY.items():
    full = mode == "dp"
    for flag, zero_bad in [("--steps", True), ("-w", False), ("-c", False), ("--np", True),
                           ("--seq", True), ("--layers", True), ("--blocks", True),
                           ("--hidden", True), ("--heads", True), ("--kv-heads", False),
                           ("--ffn", False), ("--vocab", False)]:
        values = ["-1", "9223372036854775808", "5abc", ""] if full else ["-1"]
        for v in values + (["0"] if zero_bad else []):
            cases.append((with_opt(base, flag, v), ""))
    for flag in ["--batch", "--tflops", "--mem-gbps"]:
        for v in ["-1", "nan", "inf", "0", "1e-300", "5abc"] if full else ["0", "1e-300"]:
            cases.append((with_opt(base, flag, v), ""))
    for v in ["-1", "nan", "inf", "1e-300"]:
        cases.append((base + ["--compute", v], ""))
    labels(base)
for flag, zero_bad in [("-m", True), ("--servers", True), ("--zero", False),
                       ("--predict-to", True), ("--dp", False), ("--tp", False), ("--pp", False)]:
    for v in ["-1", "9223372036854775808", "5abc"] + (["0"] if zero_bad else []):
        base = PROXY["hybrid" if flag in ("--dp", "--tp", "--pp") else "dp"]
        cases.append((with_opt(base, flag, v), ""))
for flag in ["--bucket-cap", "--first-bucket"]:
    for v in ["-1", "0", "5abc", "", "16E", "1.5"]:
        cases.append((PROXY["dp"] + [flag, v], ""))
for v in ["1,,1", "1,", ",", "-1,1", "nan,1", "inf,1", "0,0", "a,b"]:
    cases.append((PROXY["pp"] + ["--stage-weights", v], ""))
cases.append((PROXY["dp"] + ["--kv-heads", "3"], ""))
cases.append((PROXY["dp"] + ["--heads", "3"], ""))
cases.append((PROXY["dp"] + ["--hidden", "2147483647", "--heads", "1"], ""))
cases.append((PROXY["dp"] + ["--blocks", "2147483647"], ""))
cases.append((PROXY["dp"] + ["--vocab", "2147483647"], ""))
cases.append((PROXY["dp"] + ["--seq", "2147483647"], ""))
cases.append((PROXY["dp"] + ["--batch", "1e300"], ""))

# Model JSON: files, and documents with bad fields.
proxy_json = ["proxy", "dp", "--np", "2", "--steps", "1", "-w", "0", "--db", db]
files(proxy_json, "--model-json")
good_shape = {"name": "t", "blocks": 1, "hidden": 64, "heads": 2, "seq": 8, "vocab": 0}
json_cases = []
for field in ["blocks", "hidden", "heads", "seq"]:
    for v in [-1, 0, 2**31, 2**63, 1e300, "8", None, 1.5, True]:
        json_cases.append(dict(good_shape, **{field: v}))
    json_cases.append({k: v for k, v in good_shape.items() if k != field})
for v in [-1, -2, 2**40, 3, 1.5, "2"]:
    json_cases.append(dict(good_shape, kv_heads=v))
for v in [-1, 2**63, 1e300, "10"]:
    json_cases.append(dict(good_shape, vocab=v))
json_cases += [
    {"name": "empty", "layers": []},
    {"name": "neg", "layers": [{"name": "a", "params": -1}]},
    {"name": "zero", "layers": [{"name": "a", "params": 0}]},
    {"name": "huge", "layers": [{"name": "a", "params": 2**63}]},
    {"name": "big", "layers": [{"name": "a", "params": 1e300}]},
    {"name": "str", "layers": [{"name": "a", "params": "x"}]},
    {"name": "nolayer", "layers": [{}]},
    {"name": "notlist", "layers": 5},
    {}, [], 5, "model",
]
for k, doc in enumerate(json_cases):
    p = os.path.join(tmp, "model%03d.json" % k)
    with open(p, "w") as f:
        json.dump(doc, f)
    cases.append((proxy_json + ["--model-json", p], ""))
for k, text in enumerate(["{", "{\"blocks\": 1e999}", "\x00\x01", "{\"a\":1} trailing"]):
    p = os.path.join(tmp, "broken%d.json" % k)
    with open(p, "w") as f:
        f.write(text)
    cases.append((proxy_json + ["--model-json", p], ""))

# ---- diag
for sub, base in DIAG.items():
    for flag, kind in [("-T", "float"), ("--k", "float"), ("--np", "int")]:
        numeric(base, flag, kind, True, kind == "float")
    for v in ["-1", "0", "nan", "inf", "101%", "-5%", "5abc", ""]:
        cases.append((base + ["--gap", v], ""))
    labels(base)
    for v in ["slow-link=0-0:2", "slow-link=0-9:2", "slow-link=0-1:-2", "slow-link=0-1:nan",
              "slow-rank=9:1ms", "slow-rank=0:-1ms", "slow-rank=0:infs", "nosuch=1", ""]:
        cases.append((base + ["--inject", v], ""))
for flag in ["--schedules", "--latency-iters", "-n", "-W"]:
    for v in ["-1", "0", "5abc", "9223372036854775808"]:
        cases.append((DIAG["links"] + [flag, v], ""))
for flag in ["--size", "--latency-size"]:
    for v in ["-1", "0", "5abc", "16E", ""]:
        cases.append((DIAG["links"] + [flag, v], ""))
for flag in ["--calls", "--repeats"]:
    for v in ["-1", "0", "5abc"]:
        cases.append((DIAG["bisect"] + [flag, v], ""))
cases.append((DIAG["bisect"] + ["--coll-size", "-1"], ""))
for v in ["-1", "0", "5abc"]:
    cases.append((DIAG["ranks"] + ["-n", v], ""))
files(["diag", "logs", "--no-db"])

# ---- replay
files(["replay", "--np", "2", "--db", db])
for flag, kind, zero_bad in [("-n", "int", True), ("-w", "int", False), ("-c", "int", False),
                             ("--ranks", "int", True), ("--np", "int", True)]:
    numeric(REPLAY, flag, kind, zero_bad)
for flag in ["-T", "--scale-size"]:
    numeric(REPLAY, flag, "float", True, True)
for v in ["scale=-1", "scale=nan", "scale=", "scale=5abc"]:
    cases.append((REPLAY + ["--gaps", v], ""))
list_elements(REPLAY, "--ops", "allreduce")
labels(REPLAY)

# ---- import
files(["import", "--db", db])
imp = ["import", nccl_log, "--db", db]
labels(imp)
for v in ["-1", "0", "5abc", "9223372036854775808"]:
    cases.append((["import", os.path.join(samples, "osu_1_allreduce-v5.6.2-64proc-openmpi4-ucx.txt"),
                   "--db", db, "--world-size", v], ""))

# ---- reading commands
for v in ["-1", "5abc", "9223372036854775808", ""]:
    cases.append((["runs", "--db", db, "--limit", v], ""))
    cases.append((["history", "allreduce", "--db", db, "--limit", v], ""))
    cases.append((["export", "results", "--db", db, "--limit", v], ""))
    cases.append((["report", "1", "--db", db, "-o", os.path.join(tmp, "r.html"),
                   "--history-last", v], ""))
    cases.append((["db", "prune", "--db", db, "--keep-last", v], ""))
for v in ["-1", "0", "5abc", "16E", ""]:
    cases.append((["report", "1", "--db", db, "-o", os.path.join(tmp, "r.html"),
                   "--history-label", "x", "--history-size", v], ""))
for cmd in (["compare", "1", "1"], ["gate", "--baseline", "1", "--candidate", "1"]):
    for v in ["0", "0%", "-5%", "nan", "inf", "100%", "5abc", ""]:
        cases.append((cmd + ["--db", db, "--threshold", v], ""))
    for flag in ["--alpha", "--power"]:
        for v in ["0", "1", "-0.5", "nan", "inf", "1.5", "5abc"]:
            cases.append((cmd + ["--db", db, flag, v], ""))
    for v in ["-1", "5abc", "1M-", "64K-1K", ","]:
        cases.append((cmd + ["--db", db, "--sizes", v], ""))
    for v in ["p0", "p101", "x"]:
        cases.append((cmd + ["--db", db, "--run-value", v], ""))
for v in ["-1", "70000", "5abc"]:
    cases.append((["export", "results", "--db", db, "--format", "prometheus", "--listen", v], ""))
for v in ["-1", "0", "nan", "inf", "5abc"]:
    cases.append((["export", "results", "--db", db, "--format", "prometheus", "--listen", "0",
                   "--listen-timeout", v], ""))
for v in ["", "x" * 300, "a\nb"]:
    cases.append((["report", "1", "--db", db, "-o", os.path.join(tmp, "r.html"), "--title", v], ""))

# ---- topo
for root in [missing, empty, binary]:
    cases.append((["topo", "--no-nvml", "--sys-root", root], ""))
files(["topo", "--no-nvml", "--topology"])

# ---- issue 50: one grammar for durations, overflow of every size, -f 1 in every sweep
DURATION_BAD = ["10x", "-5s", "5 parsecs", "1.2.3s", "s", "1e999s", "10 s s"]
for base in (RUN, P2P, PROXY["dp"], DIAG["links"], REPLAY):
    for v in DURATION_BAD:
        cases.append((with_opt(base, "-T", v), "a number of seconds or one with a unit"))
for v in DURATION_BAD:
    cases.append((RUN + ["--time-budget", v], "a number of seconds or one with a unit"))
    cases.append((RUN + ["--inject-delay", v + ":ring"], "DURATION"))
    cases.append((["export", "results", "--db", db, "--format", "prometheus", "--listen", "0",
                   "--listen-timeout", v], "a number of seconds or one with a unit"))
cases.append((RUN + ["--inject-delay", "50q"], "a number of microseconds or one with a unit"))
for v in ["0s", "0ms", "8d"]:
    cases.append((with_opt(RUN, "-T", v), "-T"))
# Sizes past what the memory estimate holds: 2^63 and 2^64 - 1 are refused, never wrapped.
# 2^63, 15 EiB, 2^64 - 4 (a whole number of floats) and 2^64 - 1.
for v in ["9223372036854775808", "17293822569102704640", "18446744073709551612",
          "18446744073709551615"]:
    text = "" if v.endswith("5") else "16 EiB"
    cases.append((RUN[:4] + ["-b", v, "-e", v] + RUN[8:], text))
    cases.append((with_opt(with_opt(P2P, "-b", v), "-e", v), "16 EiB"))
    for flag in ["-i", "--chunk", "--zero-copy"]:
        cases.append((with_opt(RUN, flag, v), ""))
cases.append((RUN[:4] + ["-b", "8", "-e", "9223372036854775808"] + RUN[8:], "16 EiB"))
cases.append((with_opt(P2P, "-e", "9223372036854775808"), "16 EiB"))
cases.append((["p2p", "latency", "--np", "2", "-e", "64", "-f", "1", "--db", db],
              "-f 1 would never grow"))
cases.append((with_opt(with_opt(P2P, "-b", "0"), "-e", "64") + ["-f", "1"], "would never grow"))
# A mistyped command names itself and the nearest ones.
cases.append((["bogus"], "unknown command 'bogus'"))
cases.append((["rnu", "--np", "2"], "nearest: run"))
cases.append((["db", "chekc", "--db", db], "unknown command 'chekc' of 'db' (nearest: check"))
cases.append((["diag", "link", "--np", "2"], "nearest: links"))

# ---- hand-set cases (with the text the line must contain)
with open(os.path.join(tmp, "text.db"), "w") as f:
    f.write("this is not a database\n")
import sqlite3  # noqa: E402
con = sqlite3.connect(os.path.join(tmp, "foreign.db"))
con.execute("create table t(x)")
con.commit()
con.close()
r = RUN
cases += [
    (with_opt(r, "-b", "12X"), "unknown unit"),
    (with_opt(with_opt(r, "-b", "1M"), "-e", "1K"), "larger than"),
    (["run", "allgather", "--np", "2", "-b", "12", "-e", "12", "--db", db], "can't be split"),
    (["run", "allreduce", "--np", "2", "-b", "1T", "-e", "1T", "--db", db], "available"),
    (["run", "allgather", "-b", "8G", "-e", "8G", "--np", "8", "--db", db], "available"),
    (["run", "--np", "2", "--db", db, "-b", "8", "-e", "1K", "-f", "1"], "-f 1 would never grow"),
    (r + ["--stat", "p50x"], "unknown statistic"),
    (["run", "allscatter", "--np", "2", "--db", db], "unknown collective"),
    (r + ["-d", "float7"], "unknown data type"),
    (r + ["-o", "xor"], "unknown reduction op"),
    (r + ["-o", "band", "-d", "float"], "makes no sense"),
    (["run", "broadcast", "--np", "2", "-r", "7", "--db", db], "out of range"),
    (r + ["--transport", "carrier-pigeon"], "unknown transport"),
    (r[:-4] + ["--algo", "mpi", "--db", db], "can't run here"),
    (r + ["--placement", "sideways"], "--placement"),
    (r[:-4] + ["--algo", "ring", "--inject-delay", "5:tree", "--db", db], "matches no variant"),
    (["run", "--np", "5000", "--db", db], "out of range"),
    (r + ["--format", "xml"], "--format"),
    (r + ["--side-metric", "foo"], "side-by-side metric"),
    (["run", "--np", "2", "--db", ""], "--db is empty"),
    (["run", "--np", "2", "-e", "64", "--db", "/etc/hostname/x.db"], "cannot create"),
    (["run", "--np", "2", "-e", "64", "--db", os.path.join(tmp, "text.db")],
     "not a collbench database"),
    (["run", "--np", "2", "-e", "64", "--db", os.path.join(tmp, "foreign.db")],
     "not a collbench database"),
    (r + ["--frobnicate"], ""),
    (["p2p", "--np", "2", "--db", db], ""),
    (["p2p", "lat", "--np", "2", "--db", db], "latency"),
    (P2P + ["--pair", "0,1", "--all-pairs"], "exclude"),
    (["list", "--np", "2", "--transport", "bogus"], "unknown transport"),
    (["runs", "--db", db, "--until", "2026-13-45"], "--until"),
    (["runs", "--db", db, "--since", "2026-02-30"], "--since"),
    (["runs", "--db", db, "--since", "2026-01-01T25:00"], "--since"),
    (["runs", "--db", db, "--since", "yesterday"], "--since"),
    (["runs", "--db", os.path.join(tmp, "none.db")], ""),
    (["show", "999", "--db", db], "no run"),
    (["show", "abc", "--db", db], ""),
    (["show", "--db", db], ""),
    (["compare", "1", "--db", db], ""),
    (["compare", "1", "999", "--db", db], "no run"),
    (["gate", "--db", db, "--candidate", "last"], ""),
    (["gate", "--db", db, "--baseline", "1", "--candidate", "1", "--format", "yaml"], "--format"),
    (["history", "--db", db], ""),
    (["history", "allreduce", "--db", db, "--since", "2026-00-10"], "--since"),
    (["history", "allreduce", "--db", db, "--metric", "speed"], "--metric"),
    (["export", "--db", db], ""),
    (["export", "tables", "--db", db], ""),
    (["export", "results", "--db", db, "--format", "xml"], "--format"),
    (["export", "results", "--db", db, "--run", "999"], "no run"),
    (["report", "--db", db], ""),
    (["report", "999", "--db", db, "-o", os.path.join(tmp, "r.html")], "no run"),
    (["db", "--db", db], ""),
    (["db", "check", "--db", os.path.join(tmp, "none.db")], ""),
    (["db", "prune", "--db", db, "--before", "2026-99-99"], "--before"),
    (["db", "check", "--db", os.path.join(tmp, "text.db")], "not a collbench database"),
    (["nosuchcommand"], ""),
    (["import", "--db", db], ""),
    (PROXY["dp"][:2] + ["--np", "2", "--model", "gpt5", "--db", db], ""),
    (["proxy", "xp", "--np", "2", "--db", db], ""),
]


def db_state():
    h = hashlib.sha256()
    for suffix in ["", "-wal", "-journal"]:
        p = db + suffix
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(suffix.encode() + f.read())
    return h.hexdigest()


def shm(pid=None):
    # Segments are /collbench-UID-PID-...: only the case's own count (other collbench processes
    # of this user may be running beside the battery).
    prefix = "collbench-%d-" % os.getuid() + ("%d-" % pid if pid else "")
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith(prefix)}
    except OSError:
        return set()


def show(argv):
    return " ".join(a if a and a.isprintable() and " " not in a else ascii(a) for a in argv)


state = db_state()
failures = []
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
only = os.environ.get("CB_BATTERY_ONLY")  # a substring: run only the matching cases (debugging)
ran = 0
for argv, text in cases:
    if only and only not in show(argv):
        continue
    ran += 1
    p = subprocess.Popen([cb] + [a.encode("utf-8", "surrogateescape") for a in argv],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp)
    try:
        out, err = p.communicate(timeout=60)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        rc, out, err = "timeout", b"", b""
    why = []
    if rc != 2:
        why.append("exit %s" % rc)
    lines = err.decode("utf-8", "replace").splitlines()
    if len(lines) != 1 or not err.endswith(b"\n"):
        why.append("%d stderr lines" % len(lines))
    elif not lines[0].startswith("collbench: "):
        why.append("stderr not 'collbench: ...'")
    elif "internal error" in lines[0]:
        why.append("internal error")
    if text and text.lower() not in err.decode("utf-8", "replace").lower():
        why.append("no '%s'" % text)
    if out:
        why.append("printed on stdout")
    now = db_state()
    if now != state:
        why.append("database changed")
        state = now
    left = shm(p.pid)
    if left:
        why.append("left %s in /dev/shm" % sorted(left))
    if why:
        failures.append(show(argv))
        print("FAIL %s: %s" % (show(argv), "; ".join(why)))
        for l in (lines[:2] + out.decode("utf-8", "replace").splitlines()[:2]):
            print("    " + l[:200])
# The databases that were not collbench's are left as they were.
with open(os.path.join(tmp, "text.db")) as f:
    if f.read() != "this is not a database\n":
        failures.append("text.db")
        print("FAIL: text.db was changed")
con = sqlite3.connect(os.path.join(tmp, "foreign.db"))
if con.execute("select count(*) from sqlite_master where name = 'runs'").fetchone()[0]:
    failures.append("foreign.db")
    print("FAIL: foreign.db was turned into a collbench database")
con.close()
print("bad_input_battery: %d cases, %d mishandled" % (ran, len(failures)))
if not only and ran < 300:
    print("FAIL: the battery must have at least 300 cases")
    failures.append("count")
sys.exit(1 if failures else 0)
