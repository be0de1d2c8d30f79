#!/usr/bin/env bash
# Packs what a bare GPU node needs to run collbench and its GPU tests, from a finished build:
#
#   bash scripts/gpu-bundle.sh BUILD_DIR OUT_DIR
#
# OUT_DIR/ then holds
#   collbench, cb_unit_tests   launchers: set the library path, find NCCL, exec the binary
#   gpu-check.sh               the one-GPU acceptance script (docs/GPU.md), run from here
#   gpu-states.sh              what one GPU's two states follow (docs/GPU.md, "third loan")
#   libexec/                   the stripped binaries
#   lib/                       every shared library they load that a bare node lacks (ldd),
#                              and hwloc's PCI plugin (lib/hwloc/, HWLOC_PLUGINS_PATH)
#   env.sh                     what the launchers share (NCCL search, the glibc check)
#   MANIFEST.txt               the files, their sizes and the assumptions below
#
# What travels and what does not, and why:
#   - never libnccl (208 MiB; the node has it: a Python wheel's nvidia/nccl/lib, or the
#     system's), never the driver (libcuda, libnvidia-*), which must match the kernel module;
#   - never glibc (libc, libm, libpthread, libdl, librt, ld-linux): it is tied to the node's
#     loader. The bundle records the newest GLIBC_x.y symbol version the binaries need, and the
#     launchers refuse with one line on a node whose glibc is older;
#   - libstdc++ and libgcc_s do travel: they are backward compatible, so ours works on a node
#     with an older or newer distribution, where the node's own might lack a GLIBCXX version the
#     binaries need;
#   - OpenMPI's and UCX's dlopen'ed components do not travel: the bundle runs the local world of
#     threads (one process, one thread per GPU), which never initializes MPI or loads UCX
#     transports. Multi-node runs need the full build.
# The bundle must stay under 32 MiB (what is carried to a GPU node is small); the script fails
# with one line otherwise.
set -euo pipefail

die() {
  echo "gpu-bundle: $*" >&2
  exit 2
}

[[ $# -eq 2 ]] || die "usage: gpu-bundle.sh BUILD_DIR OUT_DIR"
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
bins=("$build/cli/collbench" "$build/tests/cb_unit_tests")
for b in "${bins[@]}"; do
  [[ -x $b ]] || die "$b is missing: build it first (cmake --build $build --target collbench cb_unit_tests)"
done
command -v ldd >/dev/null || die "ldd is needed"
command -v strip >/dev/null || die "strip is needed"
if [[ -e $out ]] && [[ -n "$(ls -A "$out" 2>/dev/null)" ]]; then
  die "$out exists and is not empty"
fi
mkdir -p "$out/libexec" "$out/lib/hwloc"

# Libraries that never travel (see above).
skip_lib() {
  case "$1" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*.so.* | \
      libresolv.so.* | libutil.so.* | linux-vdso.so.* | libmvec.so.*) return 0 ;;
    libnccl.so* | libcuda.so* | libnvidia-* | libnvidia*.so*) return 0 ;;
  esac
  return 1
}

# Every library `ldd` resolves for these files (a missing one is an error: the bundle would not
# run). libnccl may be "not found" where NCCL is not on the loader path: it never travels anyway.
copy_deps() {
  local line name path
  while read -r line; do
    name=${line%% *}
    if [[ $line == *"=> not found"* ]]; then
      skip_lib "$name" && continue
      die "ldd: $name (needed by $*) not found"
    fi
    [[ $line == *"=>"* ]] || continue
    path=$(sed -E 's/.*=> ([^ ]+) .*/\1/' <<<"$line")
    skip_lib "$name" && continue
    [[ -e $out/lib/$name ]] && continue
    cp -L "$path" "$out/lib/$name"
    strip --strip-unneeded "$out/lib/$name" 2>/dev/null || true
  done < <(ldd "$@" 2>/dev/null)
}

for b in "${bins[@]}"; do
  cp "$b" "$out/libexec/"
  strip --strip-unneeded "$out/libexec/$(basename "$b")"
done
copy_deps "$out/libexec/collbench" "$out/libexec/cb_unit_tests"

# hwloc finds PCI devices (GPUs, NICs for `topo`) through a plugin it dlopens.
pci_plugin=""
for dir in /usr/lib/x86_64-linux-gnu/hwloc /usr/lib64/hwloc /usr/lib/hwloc /usr/local/lib/hwloc; do
  if [[ -e $dir/hwloc_pci.so ]]; then
    pci_plugin=$dir/hwloc_pci.so
    break
  fi
done
if [[ -n $pci_plugin ]]; then
  cp -L "$pci_plugin" "$out/lib/hwloc/"
  copy_deps "$out/lib/hwloc/hwloc_pci.so"
fi

# The newest glibc symbol version any carried file needs.
glibc_needed=$( (for f in "$out"/libexec/* "$out"/lib/*.so* "$out"/lib/hwloc/*.so; do
  [[ -f $f ]] && objdump -T "$f" 2>/dev/null
done) | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n | tail -1)
[[ -n $glibc_needed ]] || glibc_needed=0.0

cat >"$out/env.sh" <<EOF
# Sourced by the bundle's launchers (made by scripts/gpu-bundle.sh). Sets the library path and
# finds libnccl.so.2 on this node; refuses with one line when the node's glibc is too old.
bundle=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
glibc_needed=$glibc_needed
EOF
cat >>"$out/env.sh" <<'EOF'
fail() {
  echo "collbench bundle: $*" >&2
  exit 2
}
glibc_here=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [[ -n $glibc_here ]] &&
  [[ $(printf '%s\n%s\n' "$glibc_needed" "$glibc_here" | sort -t. -k1,1n -k2,2n | head -1) != "$glibc_needed" ]]; then
  fail "needs glibc >= $glibc_needed, this node has $glibc_here (rebuild on an older distribution)"
fi
# libnccl.so.2: $COLLBENCH_NCCL_LIB, a Python site-packages nvidia/nccl/lib (the nvidia-nccl-cu13
# wheel), then the system's (the loader's cache, CUDA's lib directories).
find_nccl() {
  local d py
  if [[ -n ${COLLBENCH_NCCL_LIB:-} ]]; then
    [[ -e $COLLBENCH_NCCL_LIB/libnccl.so.2 ]] && { echo "$COLLBENCH_NCCL_LIB"; return; }
    fail "COLLBENCH_NCCL_LIB=$COLLBENCH_NCCL_LIB holds no libnccl.so.2"
  fi
  for py in python3 python; do
    command -v "$py" >/dev/null 2>&1 || continue
    while read -r d; do
      [[ -n $d && -e $d/nvidia/nccl/lib/libnccl.so.2 ]] && { echo "$d/nvidia/nccl/lib"; return; }
    done < <("$py" -c 'import site, sys
for p in site.getsitepackages() + [site.getusersitepackages()] + sys.path: print(p)' 2>/dev/null)
  done
  d=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')
  [[ -n $d ]] && { dirname "$d"; return; }
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [[ -e $d/libnccl.so.2 ]] && { echo "$d"; return; }
  done
  return 0
}
nccl_dir=$(find_nccl)
[[ -n $nccl_dir ]] || fail "libnccl.so.2 not found (pip install nvidia-nccl-cu13, or set COLLBENCH_NCCL_LIB=DIR)"
export COLLBENCH_NCCL_DIR=$nccl_dir
export LD_LIBRARY_PATH="$bundle/lib:$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ -d $bundle/lib/hwloc ]] && export HWLOC_PLUGINS_PATH="$bundle/lib/hwloc"
EOF

for name in collbench cb_unit_tests; do
  cat >"$out/$name" <<EOF
#!/usr/bin/env bash
# Runs the bundled $name with the bundle's libraries and this node's NCCL (env.sh).
set -euo pipefail
source "\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)/env.sh"
exec "\$bundle/libexec/$name" "\$@"
EOF
  chmod +x "$out/$name"
done
for script in gpu-check.sh gpu-states.sh; do
  cp "$here/$script" "$out/$script"
  chmod +x "$out/$script"
done

total=$(du -sb "$out" | awk '{print $1}')
{
  echo "collbench GPU bundle, made by scripts/gpu-bundle.sh from $(basename "$(cd "$build" && pwd)")"
  echo "needs: x86-64 Linux, glibc >= $glibc_needed, an NVIDIA driver for CUDA 13, libnccl.so.2"
  echo "carries: libstdc++/libgcc_s; not glibc, libnccl or driver libraries"
  echo "total bytes: $total"
  (cd "$out" && find . -type f -printf '%s %p\n' | sort -k2)
} >"$out/MANIFEST.txt"
limit=$((32 * 1024 * 1024))
if ((total >= limit)); then
  die "the bundle is $total bytes, over the 32 MiB limit"
fi
echo "gpu-bundle: $out: $(awk -v b="$total" 'BEGIN{printf "%.1f MiB", b/1048576}') ($(ls "$out/lib" | wc -l) entries in lib/), glibc >= $glibc_needed"
