#!/usr/bin/env bash
# scripts/gpu-bundle.sh: the bundle is built from this build, copied to a folder with no source
# tree and run from there: `collbench list`, a GPU run that must stop at the no-device line with
# exit 2, the launcher's NCCL lookup, the bundle's MPI world (its relocated Open MPI, with no
# mpirun of the system on PATH: `mpirun -np 2` to the no-device line, a distinct NCCL_HOSTID per
# rank), and a sample of the unit tests. The unit tests run with a
# filter (the GPU and no-device tests, the timing-loop tests, the error texts): the whole suite
# takes minutes and reads fixtures from the source tree, which a GPU node does not have; these
# are the tests the bundle exists to carry. Skipped when the build has no GPU path.
# Usage: gpu_bundle.sh /path/to/collbench   (CB_SOURCE_DIR comes from CTest)
set -uo pipefail
cb=${1:?usage: gpu_bundle.sh COLLBENCH}
source "$(dirname "$0")/lib/gpu.sh"
gpu_test gpu_bundle

expect 0 bash "$src/scripts/gpu-bundle.sh" "$build" "$tmp/made"
has "$out" "gpu-bundle: $tmp/made:"
# Bad arguments: one line, exit 2.
expect 2 bash "$src/scripts/gpu-bundle.sh" "$build"
has "$err" "usage: gpu-bundle.sh [--nccl-tests SRC] BUILD_DIR OUT_DIR"
expect 2 bash "$src/scripts/gpu-bundle.sh" "$build" "$tmp/made"
has "$err" "exists and is not empty"
expect 2 bash "$src/scripts/gpu-bundle.sh" --nccl-tests "$tmp" "$build" "$tmp/other"
has "$err" "is not an nccl-tests source tree (no src/all_reduce.cu)"
[ ! -e "$tmp/other" ] || fail "a refused bundle left $tmp/other"

# What travels: under 32 MiB, no NCCL, no driver, no glibc; libstdc++, MPI, fmt, SQLite, cudart do.
bytes=$(du -sb "$tmp/made" | awk '{print $1}')
((bytes < 32 * 1024 * 1024)) || fail "the bundle is $bytes bytes"
for lib in libnccl libcuda.so libc.so libm.so ld-linux; do
  ! compgen -G "$tmp/made/lib/$lib*" >/dev/null || fail "$lib travelled"
done
for lib in libstdc++ libmpi libfmt libsqlite3 libcudart libhwloc; do
  compgen -G "$tmp/made/lib/$lib*" >/dev/null || fail "$lib is missing from the bundle"
done
has "$(cat "$tmp/made/MANIFEST.txt")" "needs: x86-64 Linux, glibc >= "
# The MPI world: Open MPI's launcher, the plugins of a one-node world and not the fabrics', its
# help texts and parameters, PMIx's plugins, mpi.h for nccl-tests (C++ bindings off: libmpi_cxx
# does not travel), the launcher, the DLRM trace with its sources.
for f in mpi/bin/orterun mpi/lib/openmpi/mca_pml_ob1.so mpi/lib/openmpi/mca_btl_vader.so \
  mpi/lib/openmpi/mca_btl_tcp.so mpi/share/openmpi/help-mpi-runtime.txt mpi/etc/openmpi-mca-params.conf \
  mpi/include/mpi.h mpi/lib/libmpi.so mpirun traces/param-dlrm-8rank/dlrm_eg_7.json.gz traces/SOURCES.md; do
  [ -e "$tmp/made/$f" ] || fail "$f is missing from the bundle"
done
! compgen -G "$tmp/made/mpi/lib/openmpi/*ucx*" >/dev/null || fail "a UCX plugin travelled"
grep -qx '#define OMPI_BUILD_CXX_BINDINGS 0' "$tmp/made/mpi/include/mpi.h" || fail "mpi.h keeps the C++ bindings"
# nccl-tests' source travels when named, without its history, counted apart in the manifest.
mkdir -p "$tmp/nt/src" "$tmp/nt/.git"
echo "// stand-in" >"$tmp/nt/src/all_reduce.cu"
echo "history" >"$tmp/nt/.git/HEAD"
expect 0 bash "$src/scripts/gpu-bundle.sh" --nccl-tests "$tmp/nt" "$build" "$tmp/with-nt"
has "$out" "nccl-tests' source"
[ -f "$tmp/with-nt/nccl-tests/src/all_reduce.cu" ] || fail "nccl-tests' source did not travel"
[ ! -e "$tmp/with-nt/nccl-tests/.git" ] || fail "nccl-tests' .git travelled"
has "$(cat "$tmp/with-nt/MANIFEST.txt")" "(nccl-tests' source: "
rm -rf "$tmp/with-nt" "$tmp/nt"

# Run from elsewhere, with nothing of the source or build tree on any path.
mkdir -p "$tmp/node"
cp -a "$tmp/made" "$tmp/node/bundle"
rm -rf "$tmp/made"
cd "$tmp/node" || exit 1
clean=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp/node")
# The bundle's own libraries win over anything the binaries were linked against.
expect 0 "${clean[@]}" bash -c 'source bundle/env.sh && ldd bundle/libexec/collbench'
for lib in libmpi libfmt libsqlite3 libcudart libhwloc libstdc++; do
  grep -E "^\s*$lib" <<<"$out" | grep -qF "$tmp/node/bundle/lib/" ||
    fail "$lib does not resolve into the bundle: $(grep -E "^\s*$lib" <<<"$out")"
done
grep -E '^\s*libnccl' <<<"$out" | grep -q "not found" && fail "libnccl.so.2 not found through the launcher"

# A PATH with everything of this machine's but its MPI (mpirun, orterun, ompi_info, ...): what
# runs below is the bundle's.
mkdir -p "$tmp/node/path"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$d"/*; do
    case $(basename "$f") in mpi* | orte* | ompi* | opal* | osh* | shmem*) continue ;; esac
    [ -e "$tmp/node/path/$(basename "$f")" ] || ln -s "$f" "$tmp/node/path/$(basename "$f")"
  done
done
nompi=(env -i PATH="$tmp/node/path" HOME="$tmp/node")
"${nompi[@]}" bash -c 'command -v mpirun orterun' && fail "an mpirun is still on the test's PATH"
# mpirun -np 2 from the bundle: the world's GPU path stops at the one no-device line, exit 2 (the
# rest of stderr is Open MPI's note that a rank exited non-zero).
expect 2 "${nompi[@]}" ./bundle/mpirun -np 2 -- ./bundle/collbench run allreduce --algo nccl -b 8 -e 1K --no-db
[ "$(grep -c "^collbench: nccl can't run here: no usable CUDA device" <<<"$err")" -eq 1 ] ||
  fail "one no-device line expected: $err"
# The bundle's MPI world measures: MPI's own allreduce between the two processes (ob1 over the
# bundle's shared-memory and TCP plugins).
expect 0 "${nompi[@]}" ./bundle/mpirun -np 2 -- ./bundle/collbench run allreduce --algo mpi -b 8 -e 1K -n 5 -w 1 --no-db
has "$out" "# world : mpi (2 ranks on "
has "$out" "# mpi   : Open MPI v"
# Every rank its own NCCL host, on loopback sockets; --hosts shared leaves NCCL_HOSTID alone.
expect 0 "${nompi[@]}" ./bundle/mpirun -np 2 -- bash -c 'echo "rank $OMPI_COMM_WORLD_RANK: $NCCL_HOSTID $NCCL_SOCKET_IFNAME $NCCL_IB_DISABLE"'
[ "$(grep -cE '^rank [01]: .+-rank[01] lo 1$' <<<"$out")" -eq 2 ] || fail "hosts: $out"
[ "$(grep -oE '[^ ]+-rank[01] ' <<<"$out" | sort -u | wc -l)" -eq 2 ] || fail "NCCL_HOSTID not distinct: $out"
expect 0 "${nompi[@]}" ./bundle/mpirun --hosts shared -np 2 -- bash -c 'echo "hostid=${NCCL_HOSTID:-none}"'
[ "$(grep -c '^hostid=none$' <<<"$out")" -eq 2 ] || fail "--hosts shared set NCCL_HOSTID: $out"
expect 2 "${nompi[@]}" ./bundle/mpirun -np 2
has "$err" "usage: mpirun [--hosts distinct|shared] [MPIRUN OPTIONS] -- PROGRAM [ARGS]"
# The ranks load the bundle's libmpi, and mpirun itself loads Open MPI's and PMIx's libraries and
# plugins from the bundle only (the relocation: OPAL_PREFIX and its siblings, PMIX_INSTALL_PREFIX).
expect 0 "${nompi[@]}" ./bundle/mpirun -np 1 -- ldd bundle/libexec/collbench
grep -E '^\s*libmpi\.so' <<<"$out" | grep -qF "$tmp/node/bundle/lib/" || fail "a rank's libmpi: $out"
expect 0 "${nompi[@]}" ./bundle/mpirun -np 1 -- bash -c 'cat /proc/$PPID/maps'
mapped=$(awk '{print $6}' <<<"$out" | grep -E 'mca_|libmpi|libopen-(pal|rte)|libpmix|pmix_mca' | sort -u)
grep -q "$tmp/node/bundle/mpi/lib/openmpi/mca_" <<<"$mapped" || fail "no plugin loaded from the bundle: $mapped"
grep -vF "$tmp/node/bundle/" <<<"$mapped" | grep -q . && fail "loaded from outside the bundle: $(grep -vF "$tmp/node/bundle/" <<<"$mapped")"

# The carried DLRM trace, as the multi-rank stage replays it (4 of its 8 ranks).
expect 0 "${clean[@]}" ./bundle/collbench replay 'bundle/traces/param-dlrm-8rank/dlrm_eg_{rank}.json.gz' --ranks 4 --dry-run
has "$out" "alltoallv"

expect 0 "${clean[@]}" ./bundle/collbench list
has "$out" "nccl"
has "$out" "built, no usable device"
expect 0 "${clean[@]}" ./bundle/collbench list --transport cuda
has "$out" "(CUDA executor, NCCL point-to-point)"
# The GPU path reaches the no-device line: one line on stderr, exit 2.
expect 2 "${clean[@]}" ./bundle/collbench run allreduce --algo nccl -b 8 -e 1K --no-db
has "$err" "no usable CUDA device"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "more than one line on stderr: $err"
expect 2 "${clean[@]}" ./bundle/collbench run allreduce --algo ring --transport cuda -b 8 -e 1K --no-db
has "$err" "no usable CUDA device"
# NCCL that is not there: the launcher says so, exit 2, before the binary starts.
expect 2 "${clean[@]}" COLLBENCH_NCCL_LIB="$tmp/none" ./bundle/collbench list
has "$err" "collbench bundle: COLLBENCH_NCCL_LIB=$tmp/none holds no libnccl.so.2"

expect 0 "${clean[@]}" ./bundle/cb_unit_tests \
  --gtest_filter='Gpu*:CountedSetDevice.*:NcclTestsLoop.*:NcclCommPoolCache.*:NcclVariantPlan.*'
has "$out" "[  PASSED  ]"
has "$out" "GpuDevice.ReductionKernelsEqualTheHostForEveryTypeAndOp"
has "$out" "no usable CUDA device"  # the device tests skip with the reason here

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "gpu_bundle: all checks passed"
