#!/usr/bin/env bash
# Packs what a bare GPU node needs to run collbench and its GPU tests, from a finished build:
#
#   bash scripts/gpu-bundle.sh [--nccl-tests SRC] BUILD_DIR OUT_DIR
#
# OUT_DIR/ then holds
#   collbench, cb_unit_tests   launchers: set the library path, find NCCL, exec the binary
#   mpirun                     the MPI launcher (scripts/gpu-mpirun.sh): the bundle's Open MPI,
#                              each rank its own NCCL_HOSTID (several NCCL ranks on one GPU)
#   gpu-check.sh               the GPU acceptance script (docs/GPU.md), run from here
#   gpu-states.sh              what one GPU's two states follow (docs/journal/2026-11-27-gpu-h200-third-loan.md)
#   libexec/                   the stripped binaries (cb_unit_tests gzipped, unpacked on first use)
#   lib/                       every shared library they load that a bare node lacks (ldd),
#                              and hwloc's PCI plugin (lib/hwloc/, HWLOC_PLUGINS_PATH)
#   mpi/                       Open MPI's runtime: orterun/orted, its plugins, help texts, MCA
#                              parameters, PMIx's plugins and texts, and mpi.h with libmpi.so for
#                              building nccl-tests with MPI=1 (MPI_HOME=mpi)
#   nccl-tests/                with --nccl-tests SRC: that nccl-tests source tree (no .git)
#   traces/                    the 8-rank DLRM execution trace of tests/data (the multi-rank
#                              stage's replay --ranks 4)
#   env.sh                     what the launchers share (NCCL search, the glibc check, Open MPI's
#                              relocation)
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
#   - Open MPI's runtime travels for one node (shared memory and TCP: the vader, self and tcp
#     BTLs under ob1), relocated with OPAL_PREFIX and its sibling variables (env.sh). Its
#     components for network fabrics (UCX, libfabric, verbs, PSM), OpenSHMEM and MPI-IO do not:
#     their libraries are megabytes, and a one-node check sends nothing over them. Multi-node
#     runs need the full build.
# The bundle must stay under 32 MiB, and under 64 MiB with nccl-tests' source (what is carried to
# a GPU node is small); the script fails with one line otherwise.
set -euo pipefail

die() {
  echo "gpu-bundle: $*" >&2
  exit 2
}

usage="usage: gpu-bundle.sh [--nccl-tests SRC] BUILD_DIR OUT_DIR"
nccl_tests=""
if [[ ${1:-} == --nccl-tests ]]; then
  [[ $# -ge 2 ]] || die "$usage"
  nccl_tests=$2
  shift 2
  [[ -f $nccl_tests/src/all_reduce.cu ]] || die "$nccl_tests is not an nccl-tests source tree (no src/all_reduce.cu)"
fi
[[ $# -eq 2 ]] || die "$usage"
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
bins=("$build/cli/collbench" "$build/tests/cb_unit_tests")
for b in "${bins[@]}"; do
  [[ -x $b ]] || die "$b is missing: build it first (cmake --build $build --target collbench cb_unit_tests)"
done
command -v ldd >/dev/null || die "ldd is needed"
command -v strip >/dev/null || die "strip is needed"
# Open MPI's runtime, found from the orterun on PATH and the libmpi collbench loads (they must be
# one installation: a plugin of another version would not load).
libmpi=$(ldd "${bins[0]}" | awk '$1 ~ /^libmpi\.so/ {print $3; exit}')
[[ -n $libmpi ]] || die "collbench does not load libmpi: the bundle's MPI world needs an MPI build"
command -v ompi_info >/dev/null || die "ompi_info is needed (Open MPI's openmpi-bin)"
orterun=$(command -v orterun || true)
[[ -n $orterun ]] || die "orterun (Open MPI's mpirun) is not on PATH"
orterun=$(readlink -f "$orterun")
ompi_path() { ompi_info --path "$1" --parsable | awk -F: '{print $3}'; }
ompi_pkglib=$(ompi_path pkglibdir)
ompi_pkgdata=$(ompi_path pkgdatadir)
ompi_sysconf=$(ompi_path sysconfdir)
ompi_inc=$(ompi_path incdir)
[[ -e $ompi_pkglib/mca_pml_ob1.so ]] || die "no Open MPI plugins in $ompi_pkglib"
[[ $(ldd "$orterun" | awk '$1 ~ /^libopen-pal/ {print $3}') -ef \
  $(ldd "$libmpi" | awk '$1 ~ /^libopen-pal/ {print $3}') ]] ||
  die "$orterun and $libmpi belong to different Open MPI installations"
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

# Open MPI's runtime (found above).
mkdir -p "$out/mpi/bin" "$out/mpi/lib/openmpi" "$out/mpi/share/openmpi" "$out/mpi/etc" \
  "$out/mpi/include/openmpi/mpiext"
cp "$orterun" "$out/mpi/bin/orterun"
ln -s orterun "$out/mpi/bin/mpirun"
orted=$(dirname "$orterun")/orted
if [[ -x $orted ]]; then cp "$orted" "$out/mpi/bin/orted"; fi # starts ranks on other nodes only
# A one-node world: ob1 over self, vader and tcp. What stays behind (see the header), 1.7 MiB
# of plugins and 2 MiB of libraries that would bring the bundle to its 32 MiB limit:
for f in "$ompi_pkglib"/*.so; do
  case $(basename "$f") in
    # the fabrics (UCX, libfabric, verbs, PSM), and cm, which only drives their MTLs;
    *_ucx.so | *_ofi.so | mca_btl_openib.so | mca_mtl_psm.so | mca_mtl_psm2.so | mca_pml_cm.so) continue ;;
    # OpenSHMEM, MPI-IO, one-sided MPI and graph topologies: collbench calls none of them;
    mca_atomic_* | mca_memheap_* | mca_scoll_* | mca_spml_* | mca_sshmem_*) continue ;;
    mca_io_* | mca_fbtl_* | mca_fcoll_* | mca_fs_* | mca_sharedfp_* | mca_osc_* | mca_topo_treematch.so) continue ;;
    # off unless asked for (priority 0 in 4.1: han, adapt), or tools: monitoring, message logging,
    # the debuggers' message queues.
    mca_coll_han.so | mca_coll_adapt.so | *_monitoring.so | mca_vprotocol_* | libompi_dbg_msgq.so) continue ;;
  esac
  cp -L "$f" "$out/mpi/lib/openmpi/"
done
strip --strip-unneeded "$out"/mpi/bin/orte* "$out"/mpi/lib/openmpi/*.so 2>/dev/null || true
cp "$ompi_pkgdata"/help-*.txt "$out/mpi/share/openmpi/"
for f in openmpi-mca-params.conf openmpi-default-hostfile; do
  if [[ -f $ompi_sysconf/$f ]]; then cp "$ompi_sysconf/$f" "$out/mpi/etc/"; fi
done
copy_deps "$out/mpi/bin/orterun" "$out"/mpi/lib/openmpi/*.so
if [[ -e $out/mpi/bin/orted ]]; then copy_deps "$out/mpi/bin/orted"; fi
# PMIx, where Open MPI uses an external one (Debian's): its plugins and help texts, relocated with
# PMIX_INSTALL_PREFIX and its sibling variables (env.sh).
libpmix=$(ldd "$out"/mpi/lib/openmpi/mca_pmix_*.so 2>/dev/null | awk '$1 ~ /^libpmix\.so/ {print $3; exit}')
if [[ -n $libpmix ]]; then
  pmix_prefix=$(dirname "$(dirname "$(readlink -f "$libpmix")")")
  mkdir -p "$out/mpi/pmix/lib/pmix" "$out/mpi/pmix/share/pmix" "$out/mpi/pmix/etc"
  if compgen -G "$pmix_prefix/lib/pmix/*.so" >/dev/null; then
    cp -L "$pmix_prefix"/lib/pmix/*.so "$out/mpi/pmix/lib/pmix/"
    strip --strip-unneeded "$out"/mpi/pmix/lib/pmix/*.so 2>/dev/null || true
    copy_deps "$out"/mpi/pmix/lib/pmix/*.so
  fi
  if compgen -G "$pmix_prefix/share/pmix/help-*.txt" >/dev/null; then
    cp "$pmix_prefix"/share/pmix/help-*.txt "$out/mpi/pmix/share/pmix/"
  fi
fi
# mpi.h and libmpi.so for nccl-tests' MPI=1 build (MPI_HOME=mpi). The bundle's copy of mpi.h has the
# C++ bindings off: their library (libmpi_cxx) does not travel, and nccl-tests links -lmpi only.
cp "$ompi_inc/mpi.h" "$ompi_inc/mpi_portable_platform.h" "$out/mpi/include/"
sed -i 's/^#define OMPI_BUILD_CXX_BINDINGS 1$/#define OMPI_BUILD_CXX_BINDINGS 0/' "$out/mpi/include/mpi.h"
if [[ -f $ompi_inc/mpi-ext.h ]]; then
  cp "$ompi_inc/mpi-ext.h" "$out/mpi/include/"
  cp "$ompi_inc"/openmpi/mpiext/*.h "$out/mpi/include/openmpi/mpiext/"
fi
ln -s "../../lib/$(basename "$libmpi")" "$out/mpi/lib/libmpi.so"

# The MPI launcher (it is also each rank's wrapper: see scripts/gpu-mpirun.sh).
cp "$here/gpu-mpirun.sh" "$out/mpirun"
chmod +x "$out/mpirun"
# The 8-rank DLRM trace (tests/data/traces, with its sources) for the multi-rank stage's replay.
dlrm=$here/../tests/data/traces/pytorch-et/param-dlrm-8rank
if [[ -d $dlrm ]]; then
  mkdir -p "$out/traces/param-dlrm-8rank"
  # All eight: replay --ranks 4 keeps ranks 0-3 but learns the job's world from the eight files.
  cp "$dlrm"/dlrm_eg_*.json.gz "$out/traces/param-dlrm-8rank/"
  cp "$here/../tests/data/traces/SOURCES.md" "$out/traces/SOURCES.md"
fi

# nccl-tests' source (public, NVIDIA/nccl-tests), without its history: gpu-check.sh builds it there.
if [[ -n $nccl_tests ]]; then
  mkdir -p "$out/nccl-tests"
  (cd "$nccl_tests" && tar --exclude=.git --exclude=./build -cf - .) | tar -C "$out/nccl-tests" -xf -
fi

# The newest glibc symbol version any carried file needs.
glibc_needed=$( (for f in "$out"/libexec/* "$out"/lib/*.so* "$out"/lib/hwloc/*.so "$out"/mpi/bin/orte* \
  "$out"/mpi/lib/openmpi/*.so "$out"/mpi/pmix/lib/pmix/*.so; do
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
# Open MPI, relocated into the bundle: each directory it was built with is named here, since
# Debian's sysconfdir (/etc/openmpi) and PMIx's plugin path (in pmix-mca-params.conf) lie outside
# the prefix that OPAL_PREFIX alone would move.
if [[ -d $bundle/mpi ]]; then
  m=$bundle/mpi
  export OPAL_PREFIX=$m OPAL_EXEC_PREFIX=$m OPAL_BINDIR=$m/bin OPAL_LIBDIR=$m/lib \
    OPAL_INCLUDEDIR=$m/include OPAL_DATAROOTDIR=$m/share OPAL_DATADIR=$m/share \
    OPAL_PKGDATADIR=$m/share/openmpi OPAL_PKGLIBDIR=$m/lib/openmpi OPAL_SYSCONFDIR=$m/etc
  if [[ -d $m/pmix ]]; then
    export PMIX_INSTALL_PREFIX=$m/pmix PMIX_LIBDIR=$m/pmix/lib PMIX_PKGLIBDIR=$m/pmix/lib/pmix \
      PMIX_DATAROOTDIR=$m/pmix/share PMIX_DATADIR=$m/pmix/share PMIX_PKGDATADIR=$m/pmix/share/pmix \
      PMIX_SYSCONFDIR=$m/pmix/etc PMIX_MCA_mca_base_component_path=$m/pmix/lib/pmix
  fi
  unset m
fi
EOF

# The unit-test binary travels gzipped (11 of its 18 MiB; the bundle must stay under 32 MiB): its
# launcher unpacks it once, beside itself or, where the bundle is read-only, into one folder
# under TMPDIR that later calls reuse.
gzip -9 -n "$out/libexec/cb_unit_tests"
cat >"$out/collbench" <<EOF
#!/usr/bin/env bash
# Runs the bundled collbench with the bundle's libraries and this node's NCCL (env.sh).
set -euo pipefail
source "\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)/env.sh"
exec "\$bundle/libexec/collbench" "\$@"
EOF
cat >"$out/cb_unit_tests" <<'EOF'
#!/usr/bin/env bash
# Runs the bundled cb_unit_tests (carried gzipped, unpacked on first use) with the bundle's
# libraries and this node's NCCL (env.sh).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
dir=$bundle/libexec
[[ -w $dir ]] || dir=${TMPDIR:-/tmp}/collbench-bundle-$(id -u)
bin=$dir/cb_unit_tests
if [[ ! -x $bin || $bundle/libexec/cb_unit_tests.gz -nt $bin ]]; then
  mkdir -p "$dir" || fail "cannot unpack cb_unit_tests into $dir"
  gzip -dc "$bundle/libexec/cb_unit_tests.gz" >"$dir/cb_unit_tests.part.$$" ||
    fail "cannot unpack cb_unit_tests into $dir"
  chmod +x "$dir/cb_unit_tests.part.$$"
  mv -f "$dir/cb_unit_tests.part.$$" "$bin"
fi
exec "$bin" "$@"
EOF
chmod +x "$out/collbench" "$out/cb_unit_tests"
for script in gpu-check.sh gpu-states.sh; do
  cp "$here/$script" "$out/$script"
  chmod +x "$out/$script"
done

total=$(du -sb "$out" | awk '{print $1}')
source_bytes=0
[[ -d $out/nccl-tests ]] && source_bytes=$(du -sb "$out/nccl-tests" | awk '{print $1}')
{
  echo "collbench GPU bundle, made by scripts/gpu-bundle.sh from $(basename "$(cd "$build" && pwd)")"
  echo "needs: x86-64 Linux, glibc >= $glibc_needed, an NVIDIA driver for CUDA 13, libnccl.so.2"
  echo "carries: libstdc++/libgcc_s, Open MPI's one-node runtime (mpi/); not glibc, libnccl or driver libraries"
  echo "total bytes: $total (nccl-tests' source: $source_bytes)"
  (cd "$out" && find . -type f -printf '%s %p\n' | sort -k2)
} >"$out/MANIFEST.txt"
# 32 MiB for what runs, 64 MiB with nccl-tests' source.
if ((total - source_bytes >= 32 * 1024 * 1024)); then
  die "the bundle is $((total - source_bytes)) bytes without nccl-tests' source, over the 32 MiB limit"
fi
if ((total >= 64 * 1024 * 1024)); then
  die "the bundle is $total bytes with nccl-tests' source, over the 64 MiB limit"
fi
echo "gpu-bundle: $out: $(awk -v b="$total" 'BEGIN{printf "%.1f MiB", b/1048576}') ($(ls "$out/lib" | wc -l) entries in lib/$( ((source_bytes > 0)) && echo ", nccl-tests' source")), glibc >= $glibc_needed"
