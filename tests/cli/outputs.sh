#!/usr/bin/env bash
# Output files (report/export -o, gate --output, run/proxy/diag --json/--csv) follow one rule set
# (core/OutputFile.h): checked before anything is read or measured; a device or FIFO is written
# through and never replaced by a regular file; a symlink is followed and stays a link; a failed
# write leaves neither a partial file nor a temporary one behind.
# The device cases use private device nodes (mknod, as root) so a regression cannot clobber the
# machine's own /dev/null or /dev/full.
set -u
cb=$1
tmp=$(mktemp -d)
mounted=""
cleanup() {
  [ -n "$mounted" ] && umount "$mounted" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
source "$(dirname "$0")/lib/checks.sh"
# expect2 NAME command...: exit 2 with exactly one line on stderr, nothing on stdout.
expect2() {
  local name=$1
  shift
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  check "$name: exit 2 (got $rc)" test $rc -eq 2
  check "$name: one line ($(head -c 200 "$tmp/err"))" test "$(wc -l <"$tmp/err")" -eq 1
}
isChar() { test -c "$1"; }
isFifo() { test -p "$1"; }
isLink() { test -L "$1"; }
noTemporaries() { [ -z "$(find "$1" -maxdepth 1 -name '.*.??????' -print -quit)" ]; }

db=$tmp/c.db
"$cb" run allreduce --np 2 --algo ring -b 8 -e 64 -n 2 -w 1 --db "$db" --label base >/dev/null 2>&1
"$cb" run allreduce --np 2 --algo ring -b 8 -e 64 -n 2 -w 1 --db "$db" --label cand >/dev/null 2>&1
runs() { sqlite3 "$db" "select count(*) from runs"; }
check "setup: two runs stored" test "$(runs)" -eq 2

# A FIFO with a reader gets the bytes and stays a FIFO.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.got" &
reader=$!
timeout 60 "$cb" export results --db "$db" -o "$tmp/fifo" >/dev/null 2>&1
check "export -o FIFO with a reader: exit 0" test $? -eq 0
wait $reader
check "export -o FIFO: the reader got the CSV" grep -q collective "$tmp/fifo.got"
check "export -o FIFO: still a FIFO" isFifo "$tmp/fifo"
# Without a reader: refused at once, not a wait for one.
expect2 "export -o FIFO without a reader" "$cb" export results --db "$db" -o "$tmp/fifo"
check "export -o FIFO without a reader: still a FIFO" isFifo "$tmp/fifo"

# A symlink to a file: the file gets the content, the link stays a link.
echo old >"$tmp/real.csv"
ln -s real.csv "$tmp/link.csv"
"$cb" export results --db "$db" -o "$tmp/link.csv" >/dev/null 2>&1
check "export -o symlink: exit 0" test $? -eq 0
check "export -o symlink: still a link" isLink "$tmp/link.csv"
check "export -o symlink: its target written" grep -q collective "$tmp/real.csv"
ln -s nowhere.csv "$tmp/dangling.csv"
expect2 "export -o dangling symlink" "$cb" export results --db "$db" -o "$tmp/dangling.csv"
expect2 "export -o a directory" "$cb" export results --db "$db" -o "$tmp"
expect2 "export -o missing folder" "$cb" export results --db "$db" -o "$tmp/no/such/x.csv"
expect2 "report -o missing folder" "$cb" report 1 --db "$db" -o "$tmp/no/such/r.html"
expect2 "gate --output missing folder" "$cb" gate --baseline label:base --candidate label:cand \
  --db "$db" -o "$tmp/no/such/g.txt"

# Measuring commands check their outputs before anything runs: no run is stored.
before=$(runs)
expect2 "run --json missing folder" "$cb" run allreduce --np 2 -b 8 -e 8 --db "$db" \
  --json "$tmp/no/such/r.json"
expect2 "run --csv a directory" "$cb" run allreduce --np 2 -b 8 -e 8 --db "$db" --csv "$tmp"
expect2 "proxy --json dangling symlink" "$cb" proxy dp --np 2 --model resnet50 --layers 2 \
  --steps 1 --db "$db" --json "$tmp/dangling.csv"
expect2 "diag links --json missing folder" "$cb" diag links --np 2 --db "$db" \
  --json "$tmp/no/such/d.json"
check "nothing stored by the refused commands" test "$(runs)" -eq "$before"

# Devices (private nodes): written through, never replaced; a full device fails in one line.
if mknod "$tmp/null" c 1 3 2>/dev/null && mknod "$tmp/full" c 1 7 2>/dev/null; then
  "$cb" report 1 --db "$db" -o "$tmp/null" >/dev/null 2>&1
  check "report -o null device: exit 0" test $? -eq 0
  check "report -o null device: still a device" isChar "$tmp/null"
  "$cb" run allreduce --np 2 --algo ring -b 8 -e 8 -n 2 -w 1 --db "$db" --json "$tmp/null" \
    >/dev/null 2>&1
  check "run --json null device: exit 0" test $? -eq 0
  check "run --json null device: still a device" isChar "$tmp/null"
  expect2 "report -o full device" "$cb" report 1 --db "$db" -o "$tmp/full"
  check "report -o full device: still a device" isChar "$tmp/full"
  expect2 "export -o full device" "$cb" export results --db "$db" -o "$tmp/full"
  check "export -o full device: still a device" isChar "$tmp/full"
else
  echo "skip device nodes (mknod not permitted here)"
fi

# A full disk: the write fails in one line and leaves neither the file nor a temporary.
mkdir "$tmp/small"
if mount -t tmpfs -o size=16k tmpfs "$tmp/small" 2>/dev/null; then
  mounted=$tmp/small
  expect2 "report -o on a full disk" "$cb" report 1 2 --db "$db" -o "$tmp/small/r.html"
  check "full disk: no partial report" test ! -e "$tmp/small/r.html"
  check "full disk: no temporary left" noTemporaries "$tmp/small"
  echo keep >"$tmp/small/old.html"
  expect2 "report -o over a file on a full disk" "$cb" report 1 2 --db "$db" -o "$tmp/small/old.html"
  check "full disk: the old file is intact" test "$(cat "$tmp/small/old.html")" = keep
  check "full disk: no temporary left (2)" noTemporaries "$tmp/small"
else
  echo "skip full disk (tmpfs mount not permitted here)"
fi

check "no temporaries beside the outputs" noTemporaries "$tmp"
checks_done
