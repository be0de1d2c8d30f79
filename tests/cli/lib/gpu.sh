# Sourced by the GPU CLI tests (with $cb set): common.sh, the build directory of the collbench
# under test, and `gpu_test NAME`: a scratch directory, or a skip (exit 0 with the reason) when
# that build has no GPU path.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
build=$(cd "$(dirname "$cb")/.." && pwd)
listed=$("$cb" list --np 1 2>/dev/null)  # whole, not piped into grep -q (SIGPIPE under pipefail)
gpu_test() {
  scratch "$1"
  if ! grep -q '^  nccl ' <<<"$listed"; then
    echo "$1: skipped (this build has no GPU path)"
    exit 0
  fi
}
