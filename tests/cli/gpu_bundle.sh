#!/usr/bin/env bash
# scripts/gpu-bundle.sh: the bundle is built from this build, copied to a folder with no source
# tree and run from there: `collbench list`, a GPU run that must stop at the no-device line with
# exit 2, the launcher's NCCL lookup, and a sample of the unit tests. The unit tests run with a
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
has "$err" "usage: gpu-bundle.sh BUILD_DIR OUT_DIR"
expect 2 bash "$src/scripts/gpu-bundle.sh" "$build" "$tmp/made"
has "$err" "exists and is not empty"

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
