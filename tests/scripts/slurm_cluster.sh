#!/usr/bin/env bash
# `kvbench sweep --emit-slurm` on a real SLURM cluster (a private single-node one, slurm_local.bash): the job
# array runs to completion and `kvbench merge` of its shards equals the unsharded sweep (non-timing datasets,
# via h5py); an array task cancelled with scancel after finishing samples, then resubmitted, resumes them (none
# recomputed) and the merge again equals the unsharded sweep. Skips where slurmctld or slurmd cannot start.
set -euo pipefail
source "$(dirname "$0")/common.bash"
source "$here/slurm_local.bash"
require_h5py
demo_model
start_slurm_cluster

# Array task 0 (counter-causal, J 16 and 32) runs 32 samples, several seconds: time to cancel it midway.
cat > "$work/sweep.json" <<JSON
{"base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=2,samples=16,words=150,facts=1",
          "max_new": 48, "temperature": 0.8},
 "grid": {"policy": ["counter-causal", "sliding"], "J": [16, 32]}}
JSON
kvbench sweep --config "$work/sweep.json" --out-dir "$work/reference" --quiet > "$work/reference.log" 2>&1 \
  || { cat "$work/reference.log"; fail "the unsharded sweep failed"; }

# emit NAME [OPTION...]: the sweep's SLURM script (2 array tasks of 2 jobs) writing to $work/NAME; the options
# travel into the script's command line.
emit() {
  local name=$1
  shift
  kvbench sweep --config "$work/sweep.json" --out-dir "$work/$name" --emit-slurm "$work/$name.sbatch" --slurm-shards 2 \
    --sbatch "--time=00:10:00" "$@"
}
# expect_states JOB STATES: the array tasks' final states (see task_states).
expect_states() {
  local states
  states=$(task_states "$1")
  [[ $states == "$2" ]] || { tail -n 20 "$work"/*/slurm-"$1"_*.log; fail "job $1 ended as \"$states\", not \"$2\""; }
}
merged_equals_reference() {
  kvbench merge --out "$work/$1.merged" "$work/$1" --config "$work/sweep.json" > /dev/null
  /usr/bin/python3 "$here/compare_results.py" "$work/reference" "$work/$1.merged"
}

# 1. The array, left alone.
emit whole
submit "$work/whole.sbatch"
wait_job 300 "$job_id"
expect_states "$job_id" $'0 COMPLETED\n1 COMPLETED'
merged_equals_reference whole

# 2. Array task 0 cancelled once a sample of it is in a job's work file (run/journal.h), then resubmitted alone.
# One sample at a time (--batch 1, forwarded by the script): a job's work file then grows sample by sample,
# where a batch of 16 would finish all of a job's samples together and leave no moment to cancel in between.
emit killed --batch 1
mapfile -t task0 < <(kvbench sweep --config "$work/sweep.json" --out-dir "$work/killed" --shard 0/2 --dry-run --no-bench | grep -o "[^ ]*\.h5$")
# journal_samples OUT: finished samples in OUT's work file (line 1 is a header; a torn last line does not count).
journal_samples() { local lines; lines=$(cat "$1.partial.jsonl" 2> /dev/null | wc -l); echo $((lines ? lines - 1 : 0)); }
task0_samples() { local out n=0; for out in "${task0[@]}"; do n=$((n + $(journal_samples "$out"))); done; echo "$n"; }
task0_started() { (($(task0_samples) > 0)); }
submit "$work/killed.sbatch"
wait_for 300 task0_started || fail "no sample of array task 0 finished in 300 s"
scancel "${job_id}_0"
wait_job 300 "$job_id"
expect_states "$job_id" $'0 CANCELLED\n1 COMPLETED'
echo "array task 0 cancelled with $(task0_samples) finished samples in work files"
declare -A finished  # output file -> samples in its work file when cancelled
for out in "${task0[@]}"; do finished[$out]=$(journal_samples "$out"); done

submit --array=0 "$work/killed.sbatch"
wait_job 300 "$job_id"
expect_states "$job_id" "0 COMPLETED"
for out in "${task0[@]}"; do
  ((finished[$out] == 0)) || grep -q "$(basename "$out" .h5): resumed, ${finished[$out]} samples were already finished" \
    "$work/killed/slurm-${job_id}_0.log" || { cat "$work/killed/slurm-${job_id}_0.log"; fail "$out: not resumed"; }
done
! compgen -G "$work/killed/*.partial.jsonl*" > /dev/null || fail "work files left: $(ls "$work/killed")"
merged_equals_reference killed
echo "slurm_cluster: all checks passed"
