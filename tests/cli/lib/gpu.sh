# Sourced by the GPU CLI tests (after common.sh): the build directory of the collbench under test,
# and a skip (exit 0 with the reason) when that build has no GPU path.
build=$(cd "$(dirname "$cb")/.." && pwd)
listed=$("$cb" list --np 1 2>/dev/null)  # whole, not piped into grep -q (SIGPIPE under pipefail)
require_gpu_build() {
  if ! grep -q '^  nccl ' <<<"$listed"; then
    echo "$1: skipped (this build has no GPU path)"
    exit 0
  fi
}
