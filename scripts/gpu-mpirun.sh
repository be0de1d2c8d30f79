#!/usr/bin/env bash
# The MPI launcher of the GPU bundle (scripts/gpu-bundle.sh copies it to OUT_DIR/mpirun) and of
# scripts/gpu-check.sh's multi-rank stage:
#
#   mpirun [--hosts distinct|shared] [MPIRUN OPTIONS] -- PROGRAM [ARGS]
#
# In a bundle it runs the bundle's Open MPI, relocated into the bundle (env.sh), with the bundle's
# libraries and this node's NCCL on every rank's library path; in the source tree (scripts/), the
# mpirun on PATH. --hosts distinct (the default): every rank gets its own NCCL_HOSTID, so NCCL takes
# the ranks of this one node for ranks on separate hosts: it connects them through its socket
# transport on loopback (NCCL_SOCKET_IFNAME=lo, NCCL_IB_DISABLE=1, unless set already) and runs its
# real ring and tree kernels, channels and proxy threads, the processes taking turns on the one
# GPU; collbench, following NCCL's host identity, accepts such ranks on one GPU. Correct, not
# fast: their figures are not a node's. --hosts shared: NCCL_HOSTID as the caller left it (a node
# with a GPU per rank). NCCL_HOSTID is COLLBENCH_HOSTID_BASE-rankN (the base defaults to the host
# name and this launcher's pid). Everything before `--` goes to mpirun (e.g. -np 4); PROGRAM runs on
# every rank (./collbench, nccl-tests' all_reduce_perf, ...). Exit status: the job's, or 2 with one
# line for bad arguments.
set -euo pipefail
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
here=$(dirname "$self")

# Each rank starts here first (mpirun runs `self --as-rank PROGRAM ARGS`): the rank's host identity.
if [[ ${1:-} == --as-rank ]]; then
  shift
  if [[ ${COLLBENCH_RANK_HOSTS:-} == distinct ]]; then
    rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
    [[ -n $rank ]] || { echo "mpirun: no OMPI_COMM_WORLD_RANK: this rank was not started by Open MPI" >&2; exit 2; }
    export NCCL_HOSTID="$COLLBENCH_HOSTID_BASE-rank$rank"
  fi
  exec "$@"
fi

usage="usage: mpirun [--hosts distinct|shared] [MPIRUN OPTIONS] -- PROGRAM [ARGS]"
hosts=distinct
opts=()
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --hosts)
      [[ $# -ge 2 && ($2 == distinct || $2 == shared) ]] || { echo "mpirun: --hosts takes distinct or shared" >&2; exit 2; }
      hosts=$2
      shift 2
      ;;
    *) opts+=("$1"); shift ;;
  esac
done
[[ $# -ge 2 ]] || { echo "$usage" >&2; exit 2; }
shift
if [[ -f $here/env.sh && -x $here/mpi/bin/orterun ]]; then
  source "$here/env.sh"
  orterun=$here/mpi/bin/orterun
else
  orterun=$(command -v mpirun) || { echo "mpirun: no mpirun on PATH, and $here is not a GPU bundle (scripts/gpu-bundle.sh)" >&2; exit 2; }
fi
if [[ $hosts == distinct ]]; then
  export COLLBENCH_RANK_HOSTS=distinct
  export COLLBENCH_HOSTID_BASE=${COLLBENCH_HOSTID_BASE:-$(hostname 2>/dev/null || echo cb)-$$}
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
else
  unset COLLBENCH_RANK_HOSTS
fi
# The GPU machines run everything as root, which Open MPI refuses unless told so twice.
if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec "$orterun" "${opts[@]}" "$self" --as-rank "$@"
