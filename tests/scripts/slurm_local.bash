# A private single-node SLURM cluster on 127.0.0.1 (sourced by a test, after common.bash): munged, slurmctld
# and slurmd run in the foreground with their own key, config, state, spool, socket and free ports under
# $work/slurm, so a system SLURM is left alone. Cgroup-free plugins (proctrack/linuxproc, task/none): containers
# often have no cgroups. On exit its jobs are cancelled and the daemons stopped. Skips the test where it cannot start.

declare -A daemons=()  # name -> pid

# Starts the cluster and waits for its node (2 CPUs) to be idle; exports SLURM_CONF for sbatch, squeue, ...
start_slurm_cluster() {
  local tool
  for tool in mungekey munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$tool" > /dev/null || skip "no $tool (scripts/setup.sh installs slurm-wlm and munge)"
  done
  [[ $(id -u) -eq 0 ]] || skip "slurmd must run as root to start jobs"
  slurm=$work/slurm
  mkdir -p "$slurm/state" "$slurm/spool"
  chmod 755 "$work" "$slurm"  # munged wants its socket's directories open to everyone
  cleanup() { stop_slurm_cluster; }
  mungekey --create --keyfile="$slurm/munge.key"
  start_daemon munged munged --foreground --socket="$slurm/munge.sock" --key-file="$slurm/munge.key" \
    --pid-file="$slurm/munged.pid" --seed-file="$slurm/munged.seed" --log-file="$slurm/munged.log"
  wait_for 30 daemon_listening "$slurm/munge.sock" || cannot_start "munged made no socket in 30 s"
  write_slurm_conf
  export SLURM_CONF=$slurm/slurm.conf
  start_daemon slurmctld slurmctld -D
  start_daemon slurmd slurmd -D
  wait_for 60 node_idle || cannot_start "the node was not idle after 60 s: $(sinfo -h -o '%T %E' 2>&1)"
  echo "slurm cluster up: node $node, ports $ctld_port/$slurmd_port, config $SLURM_CONF"
}

# start_daemon NAME COMMAND...: in the background, output in $slurm/NAME.out, ended after 30 min at the latest.
start_daemon() {
  local name=$1; shift
  timeout 1800 "$@" > "$slurm/$name.out" 2>&1 &
  daemons[$name]=$!
}

# Fails (skips the test) as soon as a daemon has exited.
daemons_alive() {
  local name
  for name in "${!daemons[@]}"; do kill -0 "${daemons[$name]}" 2> /dev/null || cannot_start "$name exited"; done
}
daemon_listening() { daemons_alive && [[ -S $1 ]]; }
node_idle() { daemons_alive && [[ $(sinfo -h -n "$node" -o %T 2> /dev/null) == idle ]]; }

cannot_start() {
  local name
  for name in "${!daemons[@]}"; do echo "--- $name:"; tail -n 5 "$slurm/$name.out"; done
  skip "slurm cluster cannot start here: $1"
}

write_slurm_conf() {
  node=$(uname -n)
  node=${node%%.*}
  read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
  cat > "$slurm/slurm.conf" <<CONF
ClusterName=kvbench-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$slurm/munge.sock
StateSaveLocation=$slurm/state
SlurmdSpoolDir=$slurm/spool
SlurmctldPidFile=$slurm/slurmctld.pid
SlurmdPidFile=$slurm/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
}

stop_slurm_cluster() {
  if kill -0 "${daemons[slurmctld]:-none}" 2> /dev/null; then
    scancel --user="$(id -un)" 2> /dev/null || true
    wait_for 30 no_jobs || echo "warning: jobs still listed 30 s after scancel"
  fi
  local pid
  for pid in "${daemons[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${daemons[@]}"; do wait "$pid" 2> /dev/null || true; done
}

no_jobs() { [[ -z $(squeue -h 2> /dev/null) ]]; }

# submit SBATCH-ARGS...: sets $job_id. wait_job SECONDS JOB: until every array task has left the queue.
submit() { job_id=$(sbatch --parsable "$@"); }
wait_job() { wait_for "$1" job_gone "$2" || fail "job $2 still queued or running after $1 s"; }
job_gone() { [[ -z $(squeue -h -j "$1" 2> /dev/null) ]]; }

# task_states JOB: "TASK STATE" per array task, sorted, e.g. "0 COMPLETED".
task_states() {
  scontrol -o show job "$1" | sed -E 's/.* ArrayTaskId=([^ ]*) .* JobState=([^ ]*) .*/\1 \2/' | sort -n
}
