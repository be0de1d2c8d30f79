#!/usr/bin/env bash
# A real slow link for `collbench diag`: every rank in its own network namespace, joined to the
# others through a veth pair into one bridge; MPI between them over TCP only (btl tcp,self), so
# every byte crosses the veths; one link (both directions) or one rank's whole interface
# throttled with tc (htb; a u32 filter on the peer's address for a link; --slow-rank shapes what
# the rank sends, --slow-rank-in what it receives, on the bridge's end of its veth). Runs
# `collbench diag` over it and tears everything down on exit. --all-rate RATE shapes every rank's
# outgoing traffic alike instead (a network of equal links, none slow: where the links and not
# the cores bound a measurement, which is where measuring disjoint pairs at once pays).
#
#   scripts/netns-slow-link.sh COLLBENCH [--ranks N] [--slow-link A-B | --slow-hop A-B |
#                              --slow-rank R | --slow-rank-in R | --all-rate RATE] [--rate RATE]
#                              [--expect | --expect-text TEXT | --expect-below] [--opt-in]
#                              [-- DIAG ARGS...]
#
# --slow-hop A-B throttles A's traffic to B only (the link one way). --expect-text TEXT is
# --expect, and a SUSPECT line must also hold TEXT (e.g. the direction `diag ranks` names).
#
# DIAG ARGS default to `links --transport mpi --no-db`. With --expect the script checks the
# verdict names exactly the throttled link (or rank) and nothing else (exit 0 yes, 1 no);
# without a throttle it checks that nothing is suspected (healthy, or too noisy to judge). Needs root and network namespaces; where
# they are not allowed it prints why and exits 77 (CTest's skip code). With --opt-in (how CTest
# calls it) it also skips unless COLLBENCH_NETNS_TESTS=1: the default test run needs no
# privileges and stays short; `COLLBENCH_NETNS_TESTS=1 ctest -L netns` runs these.
#
# Why the PMIx settings: mpirun's PMIx server listens on loopback by default, and loopback is
# per namespace; `ptl_tcp_remote_connections` with the bridge as interface lets ranks in other
# namespaces reach it. The MPI out-of-band channel (oob) goes over the bridge too.
set -uo pipefail

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "netns-slow-link: $*" >&2; exit 2; }

[[ $# -ge 1 ]] || die "usage: $0 COLLBENCH [--ranks N] [--slow-link A-B | --slow-hop A-B | --slow-rank R | --slow-rank-in R | --all-rate RATE] [--rate RATE] [--expect | --expect-text TEXT] [-- DIAG ARGS]"
bin=$(readlink -f "$1") || die "no collbench binary '$1'"
shift
[[ -x $bin ]] || die "'$bin' is not executable"
ranks=4 text="" link="" oneway=0 rank="" inward=0 rate=200mbit allrate="" expect=0 optin=0 below=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --slow-link) link=$2; shift 2 ;;
    --slow-hop) link=$2 oneway=1; shift 2 ;;
    --slow-rank) rank=$2; shift 2 ;;
    --slow-rank-in) rank=$2 inward=1; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --all-rate) allrate=$2; shift 2 ;;
    --expect) expect=1; shift ;;
    --expect-text) expect=1 text=$2; shift 2 ;;
    --expect-below) below=1; shift ;;
    --opt-in) optin=1; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
diag=("$@")
[[ ${#diag[@]} -gt 0 ]] || diag=(links --transport mpi --no-db)
[[ $ranks =~ ^[0-9]+$ && $ranks -ge 3 && $ranks -le 16 ]] || die "--ranks must be 3..16"
if [[ -n $link ]]; then
  [[ $link =~ ^([0-9]+)-([0-9]+)$ ]] || die "--slow-link must be A-B"
  la=${BASH_REMATCH[1]} lb=${BASH_REMATCH[2]}
  [[ $la -ne $lb && $la -lt $ranks && $lb -lt $ranks ]] || die "--slow-link $link: ranks 0..$((ranks - 1)), two of them"
  from=$la to=$lb
  [[ $la -lt $lb ]] || { t=$la; la=$lb; lb=$t; }
fi
if [[ -n $rank ]]; then
  [[ $rank =~ ^[0-9]+$ && $rank -lt $ranks ]] || die "--slow-rank(-in) must be 0..$((ranks - 1))"
fi
[[ -n $link && -n $rank ]] && die "--slow-link and --slow-rank(-in) exclude each other"
[[ -n $allrate && ( -n $link || -n $rank ) ]] && die "--all-rate excludes --slow-link and --slow-rank(-in)"

[[ $optin -eq 0 || ${COLLBENCH_NETNS_TESTS:-0} == 1 ]] ||
  skip "real-network tests are opt-in: COLLBENCH_NETNS_TESTS=1 ctest -L netns (root, netns, tc)"
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth, tc)"
for tool in ip tc mpirun; do command -v $tool >/dev/null || skip "'$tool' is not installed"; done

# Names unique to this run, so two runs (or a leftover) do not collide.
tag=cb$$
ns() { echo "${tag}n$1"; }
bridge=${tag}br
cleanup() {
  for ((i = 0; i < ranks; i++)); do
    ip netns del "$(ns $i)" 2>/dev/null
    ip link del "${tag}v$i" 2>/dev/null
  done
  ip link del "$bridge" 2>/dev/null
  rm -f "$out"
}
out=$(mktemp)
trap cleanup EXIT
ip netns add "$(ns 0)" 2>/dev/null || skip "cannot create a network namespace here (ip netns add failed)"
ip link add "$bridge" type bridge 2>/dev/null || skip "cannot create a bridge here"
ip addr add 10.77.0.254/24 dev "$bridge" && ip link set "$bridge" up || die "bridge set-up failed"
for ((i = 0; i < ranks; i++)); do
  n=$(ns $i)
  [[ $i -eq 0 ]] || ip netns add "$n" || die "ip netns add $n failed"
  ip link add "${tag}v$i" type veth peer name "${tag}p$i" || skip "cannot create veth pairs here"
  ip link set "${tag}p$i" netns "$n" && ip link set "${tag}v$i" master "$bridge" up &&
    ip -n "$n" link set lo up && ip -n "$n" addr add "10.77.0.$((i + 1))/24" dev "${tag}p$i" &&
    ip -n "$n" link set "${tag}p$i" up || die "veth set-up of rank $i failed"
done

# A link: htb at the interface's root, class 1:10 unthrottled (default), class 1:20 at $rate,
# a u32 filter sending the peer's address to 1:20. A whole rank: tbf at the root.
shape_link() {  # shape_link RANK PEER: RANK's traffic to PEER through 1:20
  local n dev
  n=$(ns $1) dev=${tag}p$1
  ip netns exec "$n" tc qdisc add dev "$dev" root handle 1: htb default 10 r2q 10000 2>/dev/null ||
    skip "tc htb is not available in this kernel"
  ip netns exec "$n" tc class add dev "$dev" parent 1: classid 1:10 htb rate 40gbit &&
    ip netns exec "$n" tc class add dev "$dev" parent 1: classid 1:20 htb rate "$rate" ||
    die "tc class set-up failed (rate '$rate')"
  ip netns exec "$n" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
    match ip dst "10.77.0.$(($2 + 1))/32" flowid 1:20 2>/dev/null ||
    skip "tc u32 filters are not available in this kernel"
}
shape_rank() {  # shape_rank RANK: all of RANK's outgoing traffic at $rate
  ip netns exec "$(ns $1)" tc qdisc add dev "${tag}p$1" root tbf rate "$rate" burst 64kb \
    latency 100ms 2>/dev/null || skip "tc tbf is not available in this kernel"
}
shape_rank_in() {  # shape_rank_in RANK: all traffic to RANK, on the bridge's end of its veth
  tc qdisc add dev "${tag}v$1" root tbf rate "$rate" burst 64kb latency 100ms 2>/dev/null ||
    skip "tc tbf is not available in this kernel"
}
what="no throttle"
if [[ -n $link && $oneway -eq 1 ]]; then
  shape_link "$from" "$to"
  what="link $la-$lb throttled to $rate from $from to $to only"
elif [[ -n $link ]]; then
  shape_link "$la" "$lb" && shape_link "$lb" "$la"
  what="link $la-$lb throttled to $rate both ways"
elif [[ -n $rank && $inward -eq 1 ]]; then
  shape_rank_in "$rank"
  what="traffic to rank $rank throttled to $rate"
elif [[ -n $rank ]]; then
  shape_rank "$rank"
  what="rank $rank's interface throttled to $rate"
elif [[ -n $allrate ]]; then
  rate=$allrate
  for ((i = 0; i < ranks; i++)); do shape_rank "$i"; done
  what="every rank's interface at $allrate"
fi
echo "# netns: $ranks ranks in namespaces $(ns 0)..$(ns $((ranks - 1))), bridge $bridge; $what"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$bridge
mpmd=()
for ((i = 0; i < ranks; i++)); do
  [[ $i -eq 0 ]] || mpmd+=(:)
  mpmd+=(-np 1 ip netns exec "$(ns $i)" "$bin" diag "${diag[@]}")
done
timeout 600 mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl tcp,self \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include "$bridge" "${mpmd[@]}" \
  2>&1 | tee "$out"
status=${PIPESTATUS[0]}
# --expect-below: every link under the physical bound diag links was given (--link-rate), and no
# suspect: alike but slow is not healthy (docs/PEAK.md).
if [[ $below -eq 1 ]]; then
  if grep -q '^below bound: every link' "$out" && ! grep -qE '^SUSPECT ' "$out" && [[ $status -eq 1 ]]; then
    echo "PASS: every link below its bound, no suspect"; exit 0
  fi
  echo "FAIL: expected 'below bound: every link' and exit 1, got exit $status"; exit 1
fi
[[ $expect -eq 1 ]] || exit "$status"

# The verdict must name exactly what was throttled.
suspects=$(grep -E '^SUSPECT ' "$out" || true)
if [[ -n $link ]]; then
  want="link $la-$lb"
elif [[ -n $rank ]]; then
  want="rank $rank"
else
  want=""
fi
if [[ -z $want ]]; then
  # No suspect on a healthy mesh: "healthy" (exit 0), or "too noisy to judge" (exit 3) when the
  # schedules' figures moved more than the change diag links is asked to see (8 ranks' TCP on a
  # 2-core VM moves them 8-25%; docs/journal/2026-11-27-diag-measurements.md).
  [[ -z $suspects && $status -eq 0 ]] && { echo "PASS: healthy, no suspect"; exit 0; }
  [[ -z $suspects && $status -eq 3 ]] && { echo "PASS: too noisy to judge, no suspect"; exit 0; }
  echo "FAIL: suspects on a healthy mesh (exit $status)"; exit 1
fi
others=$(grep -v -E "^SUSPECT $want " <<<"$suspects" || true)
if [[ -n $text ]] && ! grep -qF -- "$text" <<<"$suspects"; then
  echo "FAIL: no SUSPECT line holds '$text':"
  echo "${suspects:-  (no suspect)}"
  exit 1
fi
if [[ -n $suspects && -z $others && $status -eq 1 ]]; then
  echo "PASS: the verdict names $want and nothing else"
  exit 0
fi
echo "FAIL: expected exactly '$want' (exit 1), got exit $status and:"
echo "${suspects:-  (no suspect)}"
exit 1
