#!/usr/bin/env bash
# `collbench p2p`: latency over every transport under mpirun -np 2 lands in the database (one row
# per transport and size, shown by `collbench show`); bw and bibw in a local world; --all-pairs
# prints a matrix; bad input (pair out of range, same rank twice, a world of one rank, an unknown
# transport or test) exits 2 with one line.
# Usage: p2p.sh /path/to/collbench   (CB_MPIRUN comes from CTest; default: mpirun on the PATH)
set -uo pipefail
cb=${1:?usage: p2p.sh COLLBENCH}
mpirun=${CB_MPIRUN:-mpirun}
source "$(dirname "$0")/lib/common.sh"
scratch p2p

# Under mpirun: every transport usable in an MPI world, sizes 0 .. 64 KiB (18 sizes).
expect 0 "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none \
  -np 2 "$cb" p2p latency -e 64K --transport all --db "$db"
has "$out" "# Size            Latency (us)"
has "$out" "# Side by side: latency (us), pair 0 -> 1"
has "$out" "# transport local skipped"
has "$out" "# stored as run 1 in $db"
expect 0 "$cb" show 1 --db "$db"
has "$out" "# latency  uint8  none"
for t in mpi shm ucx mpi-native; do
  rows=$(grep -cE "^ *[0-9]+ +[0-9]+ +$t +out +" <<<"$out")
  [ "$rows" -eq 18 ] || fail "show lists $rows rows for $t, expected 18: $out"
done
# Every stored row is ok, checked (#wrong 0) and has a positive time.
bad=$(grep -E "^ *[0-9]+ +[0-9]+ +(mpi|shm|ucx|mpi-native) " <<<"$out" |
  awk '$5 <= 0 || $8 != 0' | head -3)
[ -z "$bad" ] || fail "rows with no time or wrong bytes: $bad"
expect 0 "$cb" runs --db "$db"
has "$out" "latency"

# A local world: bw and bibw over the local transport, stored as runs 2 and 3.
expect 0 "$cb" p2p bw --np 2 -e 64K -n 5 -w 1 --transport local --db "$db"
has "$out" "# Size        Bandwidth (GB/s)"
has "$out" "bandwidth in GB/s = 1e9 bytes/s"
expect 0 "$cb" p2p bibw --np 2 -b 1K -e 8K -n 5 --transport local --db "$db"
expect 0 "$cb" show 3 --db "$db"
has "$out" "# bibw  uint8  none"
[ "$(grep -cE '^ *[0-9]+ +[0-9]+ +local +out ' <<<"$out")" -eq 4 ] || fail "bibw rows: $out"

# Processes over shm from 64 KiB up: the zero-copy path (the receiver reads the sender's buffer),
# windows of sends to one peer in bw, both directions at once in bibw; every byte checked.
for test in bw bibw; do
  expect 0 "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$cb" p2p $test -b 32K -e 1M -f 4 \
    -n 5 -w 1 --transport shm --no-db
  rows=$(grep -E '^[0-9]+ ' <<<"$out" | grep -vE '^[0-9]+ +[0-9.*]+ *$')
  [ "$(grep -c . <<<"$rows")" -eq 3 ] || fail "shm $test: expected 3 sizes: $out"
  bad=$(awk '$NF != 0' <<<"$rows")
  [ -z "$bad" ] || fail "shm $test: wrong bytes: $bad"
done

# Every pair of three thread ranks, and the matrix of the links at 8 B.
expect 0 "$cb" p2p latency --np 3 -b 8 -e 8 -n 20 --transport local --all-pairs --no-db
has "$out" "# Matrix: latency (us) at 8 B over local"
has "$out" "# slowest link over local:"
has "$out" "pair 1 -> 2"

# Bad input: one line, exit 2, nothing stored.
runs_before=$("$cb" runs --db "$db" | grep -cE '^ *[0-9]+ ')
expect 2 "$cb" p2p latency --np 2 --pair 0,2 --db "$db"
has "$err" "out of range for 2 ranks"
one_line "$err"
expect 2 "$cb" p2p latency --np 2 --pair 1,1 --db "$db"
has "$err" "names rank 1 twice"
one_line "$err"
expect 2 "$cb" p2p latency --np 1 --db "$db"
has "$err" "at least 2 ranks"
one_line "$err"
expect 2 "$cb" p2p latency --np 2 --transport carrier-pigeon --db "$db"
has "$err" "unknown transport 'carrier-pigeon'"
one_line "$err"
expect 2 "$cb" p2p jitter --np 2 --db "$db"
has "$err" "unknown p2p test 'jitter'"
expect 2 "$cb" p2p latency --np 2 --transport mpi-native --db "$db"
has "$err" "the mpi-native transport needs an MPI world"
one_line "$err"
expect 2 "$cb" p2p latency --np 3 --all-pairs --matrix-size 3 -e 64 --db "$db"
has "$err" "--matrix-size 3 is not one of the measured sizes"
expect 2 "$mpirun" --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none \
  -np 2 "$cb" p2p latency --pair 0,2 --db "$db"
has "$err" "out of range for 2 ranks"
[ "$(grep -c 'collbench:' <<<"$err")" -eq 1 ] || fail "expected one error line under mpirun: $err"
runs_after=$("$cb" runs --db "$db" | grep -cE '^ *[0-9]+ ')
[ "$runs_before" -eq "$runs_after" ] || fail "bad input stored a run ($runs_before -> $runs_after)"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "p2p: all checks passed"
