#!/usr/bin/env bash
# Installs the Debian 12 packages collbench builds and tests with. Idempotent: packages already
# present are not fetched again, and apt's lists are refreshed only when something is missing.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libopenmpi-dev openmpi-bin libucx-dev ucx-utils libhwloc-dev hwloc-nox
  libfmt-dev libcli11-dev libsqlite3-dev sqlite3 nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format zlib1g-dev
  chromium
  # A one-node Slurm cluster for tests/slurm/slurm.sh; promtool and curl for the Prometheus
  # export's test; jsonschema for the JSON Schema test (tests/cli/json_schemas.sh).
  slurm-wlm munge prometheus curl python3-jsonschema
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
