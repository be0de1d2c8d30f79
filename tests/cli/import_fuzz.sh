#!/usr/bin/env bash
# A bounded fuzz pass over the importers: COUNT mutations (default 200) of the real logs in
# tests/data/samples (truncation, byte flips, duplicated, deleted and junk lines, a 200 KB line,
# a 40 MB line, huge and negative numbers, CRLF, bytes that are not UTF-8, MPI launcher prefixes,
# two columns of a row swapped, a table cut out of its log), each imported on its own. Every
# import must end with exit 0 or 2 and, on 2, one "collbench: import: FILE..." line: no crash
# (exit >= 128), no abort, no "internal error", no sanitizer report; and its peak memory (max RSS,
# /usr/bin/time) must stay under the bound below (256 MiB per import). Deterministic (seeded).
# Usage: import_fuzz.sh /path/to/collbench [COUNT]   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: import_fuzz.sh COLLBENCH [COUNT]}
count=${2:-200}
# Peak memory of one import, in KiB: a log is read line by line, so this bounds any input.
max_rss_kib=${CB_IMPORT_MAX_RSS_KIB:-262144}
# ... and of one refused 100 MB line (scripts/sanitize.sh raises both: ASan's shadow memory and
# quarantine come on top).
line_max_rss_kib=${CB_IMPORT_LINE_MAX_RSS_KIB:-65536}
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
    kind = rng.randrange(14)
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
    if kind == 10: return b"\n".join(b"[1,0]<stdout>:" + l for l in ls)
    if kind == 11:
        # Two columns of one row swapped (time and busbw, say).
        rows = [k for k, l in enumerate(ls) if len(l.split()) >= 5 and not l.lstrip().startswith(b"#")]
        if not rows: return data
        k = rng.choice(rows)
        tok = ls[k].split()
        a, b = rng.sample(range(len(tok)), 2)
        tok[a], tok[b] = tok[b], tok[a]
        ls[k] = b"  ".join(tok) + b"  "
        return b"\n".join(ls)
    if kind == 12:
        # A table cut out of its log: from a row or a '#' line near it to a later line.
        start = rng.randrange(len(ls))
        return b"\n".join(ls[start:start + rng.randint(1, 40)]) + b"   \n"
    # Rarely: one 40 MB line (no newline for 40 MB), the memory bound's worst case.
    if rng.random() < 0.1:
        ls.insert(i, b"1" * (40 << 20))
        return b"\n".join(ls)
    return data
for k in range(count):
    name = logs[k % len(logs)]
    data = open(os.path.join(samples, name), "rb").read()
    for _ in range(rng.randint(1, 3)):
        if data: data = mutate(data)
    open(os.path.join(out, "m%03d_%s" % (k, name)), "wb").write(data)
EOF
failures=0
n=0
imported=0
peak=0
peak_file=none
for f in "$tmp"/m*_*.txt; do
  n=$((n + 1))
  /usr/bin/time -f %M -o "$tmp/rss" timeout 30 "$cb" import --db "$tmp/fuzz.db" "$f" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  rss=$(tail -1 "$tmp/rss")
  [ "$rc" -eq 0 ] && imported=$((imported + 1))
  [ "$rss" -gt "$peak" ] && { peak=$rss; peak_file=$(basename "$f"); }
  if [ "$rss" -gt "$max_rss_kib" ]; then
    echo "FAIL: $(basename "$f"): max RSS $rss KiB, above the bound of $max_rss_kib KiB"
    failures=$((failures + 1))
  fi
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
# A 100 MB single line, as text and as JSON: refused with one line after reading one chunk of it
# (it once took 15 s and 1.55 GB).
head -c 104857600 /dev/zero | tr '\0' 1 >"$tmp/line.txt"
{ printf '{"a": "'; head -c 104857600 /dev/zero | tr '\0' x; printf '"}'; } >"$tmp/line.json"
for f in "$tmp/line.txt" "$tmp/line.json"; do
  /usr/bin/time -f %M -o "$tmp/rss" "$cb" import --db "$tmp/fuzz.db" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  rss=$(tail -1 "$tmp/rss")
  if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "line longer than" "$tmp/err" ||
    [ "$rss" -gt "$line_max_rss_kib" ]; then
    echo "FAIL: $(basename "$f") (100 MB line): exit $rc, max RSS $rss KiB: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  fi
done
if [ "$failures" -gt 0 ]; then
  echo "$failures of $n mutated logs failed"
  exit 1
fi
echo "import_fuzz: $n mutated logs ($imported imported, the others refused in one line), 0 crashes; peak max RSS $peak KiB ($peak_file)"
