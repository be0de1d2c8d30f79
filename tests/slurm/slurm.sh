#!/usr/bin/env bash
# collbench under a real Slurm: a one-node cluster (munged, slurmctld, slurmd on loopback, every
# path in a scratch folder, its own ports) is started, three launches are run, and each run must
# be stored with the Slurm job id, node list and every rank's task ids beside its placement:
#   srun --mpi=pmix -n 2 collbench run ...      (direct launch; PMI2 is checked to fail clearly)
#   salloc -n 2 mpirun collbench run ...        (Open MPI's launcher inside an allocation)
#   sbatch scripts/slurm/collbench.sbatch       (the shipped job script: sweep + diag links)
# Every daemon started here is stopped on every exit path (trap), and the folder removed.
# Needs root and Debian's slurm-wlm and munge (scripts/install-deps.sh); exit 77 (skipped)
# without them.
# Usage: slurm.sh path/to/collbench
set -u
cb=$(realpath "$1")
src=${CB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in munged slurmctld slurmd srun salloc sbatch sinfo squeue scancel mpirun sqlite3 python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (scripts/install-deps.sh)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: slurmd launches tasks as root here; run as root"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb-slurm.XXXXXX")
# shellcheck source=../cli/lib/common.sh
source "$src/tests/cli/lib/common.sh"
export SLURM_CONF=$tmp/slurm.conf

# Stops what this script started, by the pids the daemons wrote: jobs first (their steps end
# with them), then slurmd, slurmctld, munged; each gets 10 s after SIGTERM, then SIGKILL.
stop_pid_file() {
  local file=$1 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}
cleanup() {
  if [ -s "$tmp/run/slurmctld.pid" ]; then
    timeout 10 scancel --full --quiet --partition=cb 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  stop_pid_file "$tmp/run/slurmd.pid"
  stop_pid_file "$tmp/run/slurmctld.pid"
  stop_pid_file "$tmp/munge/munged.pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port pair nothing listens on (two runs of this test at once get different ones).
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    ss -Hltn "sport = :$p or sport = :$((p + 1))" | grep -q . || { echo "$p"; return; }
  done
}
port=$(free_port)
node=$(hostname -s)
# At least 4 CPUs on the node, whatever the machine has (config_overrides lets slurmd accept
# that), so the job script's 3 ranks are placed on a 2-core CI machine too.
cpus=$(nproc)
[ "$cpus" -ge 4 ] || cpus=4
mkdir -p "$tmp"/{state,spool,log,run,munge,work}
chmod 0700 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 0400 "$tmp/munge/munge.key"
# --force: munged refuses a socket folder that is not world-searchable otherwise; it is private
# to this test on purpose.
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" || { echo "FAIL: munged did not start"; exit 1; }
touch "$tmp/plugstack.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=cbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus
PartitionName=cb Nodes=$node Default=YES MaxTime=60 State=UP OverSubscribe=FORCE:4
CONF
slurmctld -f "$SLURM_CONF" || { echo "FAIL: slurmctld did not start"; cat "$tmp/log/slurmctld.log"; exit 1; }
slurmd -f "$SLURM_CONF" -N "$node" || { echo "FAIL: slurmd did not start"; cat "$tmp/log/slurmd.log"; exit 1; }
state=""
for _ in $(seq 300); do
  state=$(timeout 5 sinfo -h -n "$node" -o %t 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.1
done
[ "$state" = idle ] || { echo "FAIL: node $node is '$state', not idle, after 30 s"; tail -n 20 "$tmp"/log/*.log; exit 1; }

# Open MPI in containers without cross-memory attach; the same flag the other MPI tests pass.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
small=(-b 1K -e 64K -f 8 -n 5 -w 1 -c 1)
cd "$tmp/work" || exit 1

# The newest run of `db` labelled `label` carries Slurm's job id, node list and every rank's task
# ids (2 ranks unless a fifth argument says otherwise).
check_run() {
  local db=$1 label=$2 launcher=$3 what=$4 ranks=${5:-2}
  local id
  id=$(sqlite3 "$db" "select id from runs where label = '$label' order by id desc limit 1")
  [ -n "$id" ] || { fail "$what: no run labelled $label in $db"; return; }
  sqlite3 "$db" "select status from runs where id = $id" | grep -qx ok || fail "$what: run $id not ok"
  "$cb" export runs --db "$db" --run "$id" --format json >"$tmp/run.json" || fail "$what: export runs"
  sqlite3 "$db" "select json from run_details where run_id = $id and kind = 'slurm'" >"$tmp/slurm.json"
  sqlite3 "$db" "select json from run_details where run_id = $id and kind = 'topology'" >"$tmp/topo.json"
  python3 - "$tmp/run.json" "$tmp/slurm.json" "$tmp/topo.json" "$launcher" "$node" "$ranks" <<'PY' || fail "$what: stored run lacks the Slurm fields"
import json, sys
run = json.load(open(sys.argv[1]))[0]
slurm = json.load(open(sys.argv[2]))
topo = json.load(open(sys.argv[3]))
launcher, node = sys.argv[4], sys.argv[5]
info = run["environment"]["informative"]
assert info["slurm_job_id"] == slurm["job_id"] and slurm["job_id"].isdigit(), (info, slurm)
assert info["slurm_nodelist"] == node == slurm["job_nodelist"], (info, slurm)
assert slurm["launcher"] == launcher, slurm
assert run["world_size"] == int(sys.argv[6]) and run["world_kind"] == "mpi", run
ranks = slurm["ranks"]
n = run["world_size"]
assert [r["rank"] for r in ranks] == list(range(n)), ranks
assert all(r["host"] == node for r in ranks), ranks
if launcher == "srun":
    # Slurm started the ranks: its task ids are collbench's ranks, all on node 0.
    assert [r["procid"] for r in ranks] == list(range(n)), ranks
    assert [r["localid"] for r in ranks] == list(range(n)), ranks
    assert all(r["nodeid"] == 0 for r in ranks), ranks
else:
    # mpirun started them (its orted daemons are the Slurm tasks): no task ids of their own.
    assert all(r["procid"] is None for r in ranks), ranks
placements = topo["placements"]
assert [p["rank"] for p in placements] == list(range(n)) and all(p["host"] == node for p in placements), placements
PY
}

# 1. srun direct launch. Debian's Open MPI 4.1.4 has no PMI2 client (no s2 component): srun
#    --mpi=pmi2 tasks fail in MPI_Init. With PMIx (Slurm's mpi/pmix_v4 plugin and Open MPI's
#    ext3x component over Debian's libpmix2) the ranks connect.
expect 0 timeout 300 srun --mpi=pmix -n 2 "$cb" run allreduce,allgather "${small[@]}" \
  --db "$tmp/srun.db" --label srun
has "$out" "# slurm : job"
has "$out" "ranks started by srun"
check_run "$tmp/srun.db" srun srun "srun --mpi=pmix"
# Without an MPI plugin each task would be a world of its own: refused with one line per task.
expect 2 timeout 120 srun --mpi=none -n 2 "$cb" run allreduce "${small[@]}" --db "$tmp/none.db"
has "$err" "srun started 2 tasks without an MPI plugin"
[ ! -e "$tmp/none.db" ] || fail "srun without PMI created a database"

# 2. mpirun inside an allocation (mpirun starts its daemons with srun, and the ranks itself).
expect 0 timeout 300 salloc -n 2 mpirun --allow-run-as-root "$cb" run allreduce "${small[@]}" \
  --db "$tmp/salloc.db" --label salloc
has "$out" "ranks started by mpirun"
check_run "$tmp/salloc.db" salloc mpirun "salloc mpirun"

# 3. The shipped job script, small: one node, 3 ranks (diag links needs 3), a short sweep and
#    diag links.
# The job exits 1 when diag links names a suspect (3 ranks on 2 shared cores may be uneven): both
# runs are stored either way.
timeout 300 sbatch --wait -N 1 --ntasks-per-node=3 --time=10 -o "$tmp/job.out" \
  --export=ALL,COLLBENCH="$cb",CB_SIZES="-b 1K -e 64K -f 8 -n 5 -w 1",CB_LINKS_ARGS="--size 64K --latency-iters 20" \
  "$src/scripts/slurm/collbench.sbatch" >"$tmp/out" 2>"$tmp/err"
rc=$?
out=$(cat "$tmp/out")
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "the job script exited $rc: $(cat "$tmp/err" "$tmp/job.out")"
job=$(grep -o 'Submitted batch job [0-9]*' "$tmp/out" | awk '{print $4}')
[ -n "$job" ] || fail "sbatch printed no job id: $out $(cat "$tmp/err")"
[ -f "$tmp/work/collbench-$job.db" ] || fail "the job script did not write collbench-$job.db: $(cat "$tmp/job.out")"
if [ -f "$tmp/work/collbench-$job.db" ]; then
  check_run "$tmp/work/collbench-$job.db" "slurm-$job" srun "sbatch (diag links)" 3
  n=$(sqlite3 "$tmp/work/collbench-$job.db" "select count(*) from runs where label = 'slurm-$job' and status = 'ok'")
  [ "$n" = 2 ] || fail "the job stored $n ok runs, expected 2 (sweep, diag links): $(cat "$tmp/job.out")"
  kinds=$(sqlite3 "$tmp/work/collbench-$job.db" "select group_concat(kind) from run_details where run_id = (select max(id) from runs)")
  has "$kinds" slurm
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; tail -n 20 "$tmp"/log/*.log; exit 1; }
echo "slurm: srun (PMIx), salloc+mpirun and sbatch runs stored with their Slurm job"
