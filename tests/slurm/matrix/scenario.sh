#!/bin/bash
# Inside a root of the SLURM version matrix (slurm_root.sh's slurm_root_run), as root: the
# plugins' unit tests of this SLURM, then cedana installed the seeds' way (`cedana plugin
# install slurm slurm/wlm`, `cedana slurm setup`) on a cluster of this SLURM, `cedana check`,
# and the seeds' preemption scenario: the victim checkpointed at preemption, requeued, resumed
# from its checkpoint with its counter going on; then again with its loop in an srun step. The
# cluster uses its own ports, so that it can run beside the host's. The build tree is /build
# (made by matrix_test.sh).
set -uo pipefail
HERE=/src/tests/slurm
ROOT=/src
export CLUSTER_SLURMCTLD_PORT=${CLUSTER_SLURMCTLD_PORT:-6917} CLUSTER_SLURMD_PORT=${CLUSTER_SLURMD_PORT:-6918}
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=/usr/local/bin/cedana
VERSION=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins); VERSION=${VERSION%%-*}
say "--- SLURM $VERSION"

(cd /build && ctest --output-on-failure -R '^(job_submit_cedana|cli_filter_cedana|spank_cedana|task_cedana)' >/tmp/unit.log 2>&1)
rc=$?
check "the plugins' unit tests pass against SLURM $VERSION" test $rc = 0
[ $rc = 0 ] || cat /tmp/unit.log >&2
# The export tests check each plugin exports exactly the symbols this SLURM looks up.
check "with the export tests of the task, job_submit and cli_filter plugins" \
  test "$(grep -cE '(task|job_submit|cli_filter)_cedana_exports .*Passed' /tmp/unit.log)" = 3

T=$(mktemp -d /var/tmp/cedana-matrix.XXXXXX)
chmod 755 "$T"
DAEMON_PID=
use_node_config
trap 'end_node_suite; rm -rf "$T"' EXIT
cluster_start || { say "cannot start SLURM $VERSION's cluster"; exit 1; }
start_node_daemon "$T/daemon.out" || { say "cannot start the node daemon"; cat "$T/daemon.out" >&2; exit 1; }

out=$("$CEDANA" plugin install slurm slurm/wlm 2>&1)
check "plugin install takes the build for SLURM $VERSION" grep -q "plugin slurm/wlm .* installed (built for SLURM $VERSION)" <<<"$out"
[ -n "$out" ] && say "$out"
out=$("$CEDANA" slurm setup 2>&1); rc=$?
check "cedana slurm setup" test $rc = 0
[ $rc = 0 ] || say "$out"
check "slurm.conf asks for the preemption notice in this version's form" \
  grep -q '^PreemptParameters=.*send_user_signal' /etc/slurm/slurm.conf
check "the cluster is back up after setup" wait_for 30 bash -c "sinfo -h -n $CLUSTER_NODE -o %t | grep -qE 'idle|mix|alloc'"
out=$("$CEDANA" check --probe-mib 1 2>&1)
check "cedana check finds SLURM $VERSION at the installed plugins' version" \
  grep -Eq "^ok +slurm +SLURM $VERSION \(the installed plugins. version\)" <<<"$out"
check "and every plugin loaded" grep -Eq '^ok +slurm plugins +task/cedana, job_submit/cedana, cli_filter/cedana and spank_cedana.so' <<<"$out"
[ "$FAILED" = 0 ] || say "$out"

cd "$T" && cp "$HERE/victim.sbatch" "$HERE/preemptor.sbatch" .
victim=$(submit -p debug -w compute-01 victim.sbatch)
check "victim runs" wait_job_state "$victim" RUNNING 30
check "victim counts" wait_for 30 counter_at_least victim.out 5
check "victim runs under cedana" grep -q "started under cedana" victim.err
preemptor=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
check "victim checkpointed at preemption" wait_for 30 grep -q "taken on preemption" victim.err
at_preempt=$(last_counter victim.out)
check "victim requeued (PENDING)" wait_job_state "$victim" PENDING 120
check "preemptor runs" wait_job_state "$preemptor" RUNNING 60
scancel "$preemptor"
release_requeue_hold "$victim"
check "victim runs again" wait_job_state "$victim" RUNNING 60
check "victim resumed from its checkpoint" wait_for 30 resumed victim.err "$victim" 1
check "victim counts on" wait_for 30 counter_at_least victim.out $((at_preempt + 3))
check "victim.out: each counter once, from 0 on (checkpoint at $at_preempt)" counts_from_zero victim.out
scancel "$victim"

# The same with the victim's loop in an srun step: the step goes into the job's checkpoint.
{ grep '^#' victim.sbatch | sed 's/CEDANA_CHECKPOINT=victim/CEDANA_CHECKPOINT=srun-victim/'
  echo "srun bash -c 'for i in \$(seq 0 600); do echo \"Counter: \$i\"; sleep 1; done'"
} >srun_victim.sbatch
victim=$(submit -p debug -w compute-01 -o srunv.out -e srunv.err srun_victim.sbatch)
check "srun victim counts" wait_for 60 counter_at_least srunv.out 5
preemptor=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
check "srun victim checkpointed at preemption, its step with it" wait_for 30 grep -q "taken on preemption" srunv.err
at_preempt=$(last_counter srunv.out)
check "srun victim requeued (PENDING)" wait_job_state "$victim" PENDING 120
scancel "$preemptor"
release_requeue_hold "$victim"
check "srun victim resumed from its checkpoint" wait_for 60 resumed srunv.err "$victim" 1
check "its step counts on" wait_for 30 counter_at_least srunv.out $((at_preempt + 3))
check "srunv.out: each counter once, from 0 on (checkpoint at $at_preempt)" counts_from_zero srunv.out
scancel "$victim"
[ "$FAILED" = 0 ] || { tail -5 victim.err srunv.err >&2; tail -20 "$T/daemon.log" >&2; }
say "SLURM $VERSION: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
