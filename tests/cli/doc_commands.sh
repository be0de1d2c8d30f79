#!/usr/bin/env bash
# Runs every command line of README.md and docs/*.md, so a renamed flag breaks this test, not a
# user. Command blocks are found automatically: fenced blocks tagged sh/bash, or whose first line
# starts with collbench, mpirun, srun, ./build/, build/, bash or python3. A block that cannot run
# here (a GPU, a second node, the build itself) is preceded in the Markdown by the marker
#   <!-- doc-test: skip: REASON -->
# and is listed as skipped with its reason. Commands run as written in a scratch folder holding a
# database of 12 small runs (labels nightly and pr; `show 12`, `compare 11 12` refer to them),
# the logs the import example names (tests/data/docs), and build/, scripts/ and tests/data
# links; `collbench` is on PATH; mpirun gets --oversubscribe (CI machines may have fewer cores
# than the examples' ranks). A command passes when it exits 0 (gate: 0 pass, 1 regression or 3
# inconclusive, never 2). The README's p2p examples run OSU's default sweeps: allow this test a
# few minutes.
# $1 = the collbench binary; CB_SOURCE_DIR = the source tree.
set -u
cb=$(readlink -f "$1")
src=${CB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=$(cd "$(dirname "$cb")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0 skips=0

# extract FILE: prints "FILE:LINE<TAB>command" per command, or "FILE:LINE<TAB>#skip REASON".
extract() {
  awk -v file="$1" '
    function flush() {
      if (cmd != "") {
        gsub(/[ \t]+#[ \t].*$/, "", cmd)
        if (skip != "") print file ":" start "\t#skip " skip; else print file ":" start "\t" cmd
      }
      cmd = ""
    }
    /^[ \t]*```/ {
      if (!inblock) {
        inblock = 1; first = 1; tag = $0; sub(/^[ \t]*```/, "", tag)
        skip = marker; marker = ""; command_block = (tag ~ /^(sh|bash|console)$/)
      } else { flush(); inblock = 0 }
      next
    }
    !inblock {
      if ($0 ~ /<!-- doc-test: skip/) { marker = $0; sub(/.*doc-test: skip:? */, "", marker); sub(/ *-->.*/, "", marker) }
      else if ($0 ~ /[^ \t]/) marker = ""
      next
    }
    {
      line = $0; sub(/^[ \t]+/, "", line)
      if (first && line != "") {
        first = 0
        if (line ~ /^(collbench|mpirun|srun|\.\/build\/|build\/|bash |python3 )/) command_block = 1
      }
      if (!command_block || line == "") next
      if (cmd == "") start = NR
      cont = (line ~ /\\$/)
      if (cont) sub(/\\$/, "", line)
      cmd = cmd line
      if (!cont) flush()
    }
  ' "$1"
}

# The scratch folder the commands run in.
work=$tmp/work
mkdir -p "$work/build/cli" "$work/bin"
ln -s "$cb" "$work/build/cli/collbench"
ln -s "$cb" "$work/bin/collbench"
[ -d "$build/tests" ] && ln -s "$build/tests" "$work/build/tests"
ln -s "$src/scripts" "$work/scripts"
mkdir -p "$work/tests" && ln -s "$src/tests/data" "$work/tests/data"  # recorded topologies
ln -s "$src/tests/tools" "$work/tests/tools"  # the synthetic fleet of README's diag nodes
cp "$src"/tests/data/docs/*.log "$src"/tests/data/docs/*.txt "$src"/tests/data/docs/*.out "$work/"
mpirun_real=$(command -v "${CB_MPIRUN:-mpirun}")
cat >"$work/bin/mpirun" <<WRAP
#!/usr/bin/env bash
exec "$mpirun_real" --oversubscribe "\$@"
WRAP
chmod +x "$work/bin/mpirun"
export PATH="$work/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work" || exit 1
# 12 runs: 1-8 labelled nightly, 9-12 labelled pr (the README's compare and gate examples).
for i in $(seq 12); do
  label=nightly
  [ "$i" -gt 8 ] && label=pr
  collbench run allreduce --np 2 --algo ring -b 1M -e 1M -n 10 -w 2 --label $label >/dev/null ||
    { echo "FAIL: seeding run $i"; exit 1; }
done

for doc in "$src/README.md" "$src"/docs/*.md; do
  rel=${doc#"$src"/}
  while IFS=$'\t' read -r where command; do
    where=${where#"$src"/}
    if [[ $command == "#skip "* ]]; then
      echo "skip $where: ${command#\#skip }"
      skips=$((skips + 1))
      continue
    fi
    start=$SECONDS
    timeout 300 bash -c "$command" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    allowed="0"
    [[ $command == *" gate "* || $command == "collbench gate"* ]] && allowed="0 1 3"
    # diag: 1 is a verdict (suspects found, or links below their bound), 3 "too noisy to judge"
    # (a shared machine), not failures.
    [[ $command == *" diag "* || $command == "collbench diag"* ]] && allowed="0 1 3"
    if [[ " $allowed " == *" $rc "* ]]; then
      echo "ok   $where ($((SECONDS - start)) s): $command"
      passes=$((passes + 1))
    else
      echo "FAIL $where: exit $rc: $command"
      head -5 "$tmp/err" | sed 's/^/    /'
      fails=$((fails + 1))
    fi
  done < <(extract "$doc")
done
echo "$passes passed, $skips skipped, $fails failed"
[ $passes -gt 0 ] && [ $fails -eq 0 ]
