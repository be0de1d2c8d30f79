#!/usr/bin/env bash
# Installs, builds and runs every test: unit tests, multi-process tests under mpirun (2 and 3
# processes), CLI tests, the format check. Prints CTest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
# OpenMPI as root needs these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure -j 2 --timeout 900
