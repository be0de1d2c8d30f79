#!/usr/bin/env bash
# A bounded fuzz pass over the importers: 300 mutations of the real logs in tests/data/samples
# (truncation, byte flips, duplicated, deleted and junk lines, a 200 KB line, huge and negative
# numbers, CRLF, bytes that are not UTF-8, MPI launcher prefixes), each imported on its own. Every
# import must end with exit 0 or 2 and, on 2, one "collbench: import: FILE..." line: no crash
# (exit >= 128), no abort, no "internal error", no sanitizer report. Deterministic (seeded).
# Usage: import_fuzz.sh /path/to/collbench [COUNT]   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: import_fuzz.sh COLLBENCH [COUNT]}
count=${2:-300}
here=$(cd "$(dirname "$0")" && pwd)
samples=${CB_SOURCE_DIR:-$here/../..}/tests/data/samples
tmp=$(mktemp -d /tmp/cb_fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 - "$samples" "$tmp" "$count" <<'EOF' || { echo "mutation script failed"; exit 1; }
import os, random, re, sys
samples, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
logs = sorted(f for f in os.listdir(samples) if f.endswith(".txt"))
rng = random.Random(20261123)
def lines(b): return b.split(b"\n")
def mutate(data):
    kind = rng.randrange(11)
    ls = lines(data)
    i = rng.randrange(len(ls))
    if kind == 0: return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 2: ls.insert(i, ls[i]); return b"\n".join(ls)
    if kind == 3: del ls[i]; return b"\n".join(ls)
    if kind == 4: ls.insert(i, bytes(rng.randrange(1, 256) for _ in range(rng.randint(1, 300)))); return b"\n".join(ls)
    if kind == 5: ls.insert(i, b"#" + b"a" * 200000); return b"\n".join(ls)
    if kind == 6: return re.sub(rb"\d+", lambda m: b"99999999999999999999999" if rng.random() < 0.1 else m.group(0), data)
    if kind == 7: return re.sub(rb"\d+", lambda m: b"-" + m.group(0) if rng.random() < 0.1 else m.group(0), data)
    if kind == 8: return data.replace(b"\n", b"\r\n")
    if kind == 9: ls[i] = ls[i] + b"\xff\xfe\xc3("; return b"\n".join(ls)
    return b"\n".join(b"[1,0]<stdout>:" + l for l in ls)
for k in range(count):
    name = logs[k % len(logs)]
    data = open(os.path.join(samples, name), "rb").read()
    for _ in range(rng.randint(1, 3)):
        if data: data = mutate(data)
    open(os.path.join(out, "m%03d_%s" % (k, name)), "wb").write(data)
EOF
failures=0
n=0
for f in "$tmp"/m*_*.txt; do
  n=$((n + 1))
  timeout 30 "$cb" import --db "$tmp/fuzz.db" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  err=$(cat "$tmp/err")
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    echo "FAIL: $(basename "$f"): exit $rc: $(head -c 300 "$tmp/err")"
    cp "$f" "/tmp/cb_fuzz_failed_$(basename "$f")"
    failures=$((failures + 1))
  elif grep -qiE "internal error|sanitizer|runtime error|terminate called" "$tmp/err"; then
    echo "FAIL: $(basename "$f"): $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  elif [ "$rc" -eq 2 ] && { [ "$(wc -l <"$tmp/err")" -ne 1 ] || [[ "$err" != "collbench: import: "* ]]; }; then
    echo "FAIL: $(basename "$f"): expected one 'collbench: import: ...' line, got: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done
if [ "$failures" -gt 0 ]; then
  echo "$failures of $n mutated logs failed"
  exit 1
fi
echo "import_fuzz: $n mutated logs, 0 crashes"
