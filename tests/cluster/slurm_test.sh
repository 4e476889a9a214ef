#!/usr/bin/env bash
# A real Slurm job array (Debian's slurm-wlm and munge, daemons started here as root on localhost, no systemd)
# runs the shipped samples/batch/slurm-array.sbatch over a 4-way sharded manifest: every output correct, and the
# task whose shard holds a bad job returns that job's exit code. The daemons are stopped by PID at the end.
set -euo pipefail
dmlgrad=$(readlink -f "$1")
samples=$(readlink -f "$2")
source "$(dirname "$0")/manifest.sh"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
work=$(mktemp -d)
chmod 755 "$work"
pids=()
stop_daemons() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; done
    rm -rf "$work"
}
trap stop_daemons EXIT

# munge: its own key and socket in the scratch folder, so a munged the system may run is left alone.
mkdir -p "$work/munge" "$work/spool/ctld" "$work/spool/d"
dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 status=none
chmod 700 "$work/munge"; chmod 400 "$work/munge/key"
munged --force --key-file="$work/munge/key" --socket="$work/munge/sock" --pid-file="$work/munge/pid" \
    --seed-file="$work/munge/seed" --log-file="$work/munge/log"
pids+=("$(cat "$work/munge/pid")")

host=$(hostname -s)
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=dmlgradtest
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/ctld.pid
SlurmdPidFile=$work/d.pid
SlurmctldLogFile=$work/ctld.log
SlurmdLogFile=$work/d.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -i
for _ in $(seq 50); do [[ -s $work/ctld.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$work/ctld.pid")")
slurmd
for _ in $(seq 50); do [[ -s $work/d.pid ]] && break; sleep 0.1; done
pids+=("$(cat "$work/d.pid")")
for _ in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
sinfo -h -o %t | grep -q idle || { echo "FAIL: the Slurm node did not come up"; tail -5 "$work"/*.log; exit 1; }

# 13 jobs; job 13 (index 13, shard 1 of 4) names a missing input.
make_batch_folder "$work" 13
echo "relu-grad -x missing.npy -g dy.npy -o out/o13.npy" >>"$work/jobs.txt"
status=0
(cd "$work" && DMLGRAD="$dmlgrad" sbatch --wait --array=0-3 --quiet "$samples/batch/slurm-array.sbatch" jobs.txt) ||
    status=$?
[[ $status -ne 0 ]] || { echo "FAIL: sbatch --wait returned 0 although a job was bad"; exit 1; }
expect_all_outputs "$work" 13
for task in 0 1 2 3; do
    log=$(ls "$work"/dmlgrad-*_"$task".log)
    if [[ $task -eq 1 ]]; then
        grep -q "jobs.txt line 14: .*missing.npy" "$log" || { echo "FAIL: task 1 did not name the bad job"; cat "$log"; exit 1; }
    else
        [[ ! -s $log ]] || { echo "FAIL: task $task printed: $(cat "$log")"; exit 1; }
    fi
done
# Each task's exit code as Slurm recorded it: 2 for the bad job's task, 0 for the others.
codes=$(cd "$work" && scontrol show job -o 2>/dev/null | grep -o 'ArrayTaskId=[0-9]* .*ExitCode=[0-9]*:[0-9]*' |
    sed -E 's/ArrayTaskId=([0-9]+) .*ExitCode=([0-9]+):.*/\1=\2/' | sort | tr '\n' ' ')
[[ $codes == "0=0 1=2 2=0 3=0 " ]] || { echo "FAIL: task exit codes '$codes', expected '0=0 1=2 2=0 3=0 '"; exit 1; }
echo "Slurm job array: every output correct, task 1 exited 2 for its bad job"
