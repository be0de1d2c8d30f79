#!/usr/bin/env bash
# Issue 50 defects 3, 4 and 6: the database on a small file system of its own (a tmpfs).
#  - 2 MiB hold two small runs (each a 370 KiB database): the log is bounded and checkpointed at
#    the end of each run (SQLite's default let it grow past 2 MiB beside a 4 KiB file, and the
#    first run failed "database or disk is full");
#  - the disk full: the reading commands (runs, show, db check, export) still read, and export
#    the data elsewhere; a run that cannot be stored says so in one line, exit 2, before anything
#    is measured, and leaves the file as it was (integrity ok, no run half-written);
#  - the file system read-only: the same reads work, a run is refused in one line.
# Mounting needs root (CI runs as root); elsewhere the test skips (exit 77) and says why.
set -u
cb=$1
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/checks.sh"
scratch db_full_disk
mnt=$tmp/mnt
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>"$tmp/mount.err"; then
  echo "SKIP: cannot mount a 2 MiB tmpfs here: $(head -1 "$tmp/mount.err") (needs root)"
  exit 77
fi
trap 'umount "$mnt" 2>/dev/null; rm -rf "$tmp"' EXIT
d=$mnt/cb.db
small=(run --np 2 -b 8 -e 256K -n 20)
# The test's own look at the file: immutable, as sqlite3 cannot open it otherwise on a full disk.
q() { sqlite3 "file:$d?immutable=1" "$1"; }
# reads WHAT: every reading command works on $d and exports its data to $tmp.
reads() {
  local what=$1
  expect 0 "$cb" runs --db "$d"
  check "$what: runs lists both runs" grep -q "second" <<<"$out"
  expect 0 "$cb" show 1 --db "$d"
  check "$what: show prints the first run's points" grep -q "allreduce" <<<"$out"
  expect 0 "$cb" db check --db "$d"
  check "$what: db check says integrity ok" grep -q "integrity: ok" <<<"$out"
  expect 0 "$cb" export results --db "$d" --format csv -o "$tmp/$what.csv"
  check "$what: export wrote every result elsewhere" \
    test "$(($(wc -l <"$tmp/$what.csv") - 1))" -eq "$(q "select count(*) from results")"
  expect 0 "$cb" history allreduce --db "$d"
  expect 2 "$cb" "${small[@]}" --db "$d" --label third
  check "$what: a run that cannot be stored says why in one line ($err)" \
    test "$(grep -c . <<<"$err")" -eq 1
  check "$what: ... naming the cause" grep -q "$2" <<<"$err"
  check "$what: ... before measuring" test -z "$(grep -F "allreduce" <<<"$out")"
}

for label in first second; do
  "$cb" "${small[@]}" --db "$d" --label $label >"$tmp/out" 2>"$tmp/err"
  rc=$?
  check "a small run ($label) fits a 2 MiB file system (rc $rc: $(head -c 300 "$tmp/err"))" \
    test $rc -eq 0
  check "the log is empty after the run ($label)" \
    test "$(stat -c %s "$d-wal" 2>/dev/null || echo 0)" -eq 0
done

# The disk full: reads work, a run is refused, nothing changes.
dd if=/dev/zero of="$mnt/fill" bs=4k >/dev/null 2>&1
check "the disk is full" test "$(df --output=avail "$mnt" | tail -1)" -eq 0
reads full "disk is full"
check "full: still two runs, none running" \
  test "$(q "select count(*) from runs")/$(q "select count(*) from runs where status = 'running'")" = "2/0"

# A read-only file system: the same.
rm -f "$mnt/fill"
mount -o remount,ro "$mnt"
check "the file system is read-only" grep -qE "^tmpfs $mnt tmpfs ro[,\ ]" /proc/mounts
reads read-only "read-only"
mount -o remount,rw "$mnt"
check "read-only: still two runs" test "$(q "select count(*) from runs")" -eq 2
check "integrity after all" test "$(sqlite3 "$d" "pragma integrity_check")" = ok
checks_done
