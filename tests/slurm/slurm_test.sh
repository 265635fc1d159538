#!/bin/bash
# End to end on a real SLURM cluster started here (tests/slurm/cluster.sh): the plugins are
# installed with `cedana plugin install slurm slurm/wlm` and `cedana slurm setup`, then the
# seeds' preemption scenario runs word for word, followed by cancellation and resubmission,
# fresh labels, jobs without cedana, a job with real state, and the faults.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
source "$HERE/cluster.sh"
source "$HERE/checks.sh"
CEDANA=${CEDANA:-/usr/local/bin/cedana}
MEMSTATE=${MEMSTATE:-$ROOT/build/tests/memstate}
refuse_other_node_daemon
# The time-limit runs (linuxproc only, below) are checked in SLURM's accounting too.
[ "${CLUSTER_PROCTRACK:-linuxproc}" = linuxproc ] && export CLUSTER_ACCOUNTING=1
T=$(mktemp -d /var/tmp/cedana-slurm.XXXXXX)
chmod 755 "$T"
DAEMON_PID=

# --- set-up: config for this run, cluster, node daemon, plugins ------------------------------
use_node_config
cleanup() {
  end_node_suite
  rm -rf "$T"
}
trap cleanup EXIT
start_daemon() { start_node_daemon "$T/daemon.out"; }
stop_daemon() { kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=; }

cluster_start || { say "cannot start the SLURM cluster"; exit 1; }
cp -p /etc/slurm/slurm.conf "$T/slurm.conf.before"
cp -p /etc/slurm/plugstack.conf "$T/plugstack.conf.before" 2>/dev/null
start_daemon || { say "cannot start the node daemon"; cat "$T/daemon.out" >&2; exit 1; }
# Before setup, `cedana check` fails, naming the plugins slurmctld does not load.
out=$("$CEDANA" check --probe-mib 1 2>&1); rc=$?
check "cedana check fails before setup" test $rc = 1
[ $rc = 1 ] || say "$out"
check "naming the plugins not loaded" \
  grep -Eq '^FAIL +slurm plugins +not loaded: task/cedana, job_submit/cedana' <<<"$out"
check "and the fix" grep -q 'fix: `cedana slurm setup` as root on every SLURM node' <<<"$out"
check "cedana plugin install slurm slurm/wlm" "$CEDANA" plugin install slurm slurm/wlm
# Plugins built for another SLURM version are refused before anything changes.
mkdir -p "$T/fakebin" && printf '#!/bin/sh\necho "slurm 99.99.9"\n' >"$T/fakebin/scontrol" && chmod +x "$T/fakebin/scontrol"
out=$(PATH=$T/fakebin:$PATH "$CEDANA" slurm setup 2>&1)
check "setup refuses plugins built for another SLURM version" grep -q "this node runs SLURM 99.99.9" <<<"$out"
check "and changes nothing" cmp -s /etc/slurm/slurm.conf "$T/slurm.conf.before"
check "cedana slurm setup" "$CEDANA" slurm setup
check "slurm.conf has the job_submit plugin" grep -q '^JobSubmitPlugins=job_submit/cedana' /etc/slurm/slurm.conf
check "slurm.conf has the cli_filter plugin" grep -q '^CliFilterPlugins=cli_filter/cedana' /etc/slurm/slurm.conf
check "plugstack.conf requires spank_cedana.so" grep -q '^required .*/spank_cedana.so' /etc/slurm/plugstack.conf
check "the cluster is back up after setup" wait_for 30 bash -c "sinfo -h -n $CLUSTER_NODE -o %t | grep -qE 'idle|mix|alloc'"
out=$("$CEDANA" check --probe-mib 1 2>&1); rc=$?
check "cedana check passes after setup" test $rc = 0
[ $rc = 0 ] || say "$out"
check "it finds SLURM at the installed plugins' version" grep -Eq '^ok +slurm +SLURM [0-9.]+ \(the installed plugins. version\)' <<<"$out"
check "and every plugin loaded" grep -Eq '^ok +slurm plugins +task/cedana, job_submit/cedana, cli_filter/cedana and spank_cedana.so' <<<"$out"

cd "$T"
cp "$HERE/victim.sbatch" "$HERE/preemptor.sbatch" "$HERE/memjob.sbatch" .

# --- the seeds' preemption scenario, word for word -------------------------------------------
# job-info RPCs slurmctld has answered (sdiag): the proxies' questions about their jobs.
job_info_rpcs() { sdiag 2>/dev/null | grep -m1 'REQUEST_JOB_INFO_SINGLE' | grep -o 'count:[0-9]*' | cut -d: -f2; }
victim=$(submit -p debug -w compute-01 victim.sbatch)
check "victim runs" wait_job_state "$victim" RUNNING 30
check "victim counts" wait_for 30 counter_at_least victim.out 5
check "victim runs under cedana (settings recovered from its #SBATCH lines)" grep -q "started under cedana" victim.err
# SLURM tells the job of its preemption (SIGUSR1, preempt_send_user_signal): its proxy does not
# ask slurmctld about it twice a second (which would be 20 RPCs in these 10 s).
rpcs_before=$(job_info_rpcs)
counter_before=$(last_counter victim.out)
wait_for 30 counter_at_least victim.out $((counter_before + 10))
rpcs_after=$(job_info_rpcs)
check "the proxy asked slurmctld about its job at most twice while the job counted 10 s ($rpcs_before -> $rpcs_after)" \
  test -n "$rpcs_before" -a $((${rpcs_after:-999} - ${rpcs_before:-0})) -le 2
preemptor=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" preemptor.sbatch)
check "victim checkpointed at preemption" wait_for 30 grep -q "taken on preemption" victim.err
at_preempt=$(last_counter victim.out)
check "victim requeued (PENDING)" wait_job_state "$victim" PENDING 120
check "preemptor runs" wait_job_state "$preemptor" RUNNING 60
# RUNNING comes before its first echo: cancelled at once it may not have written a line yet.
check "preemptor writes to victim.out" wait_for 30 grep -q "^Starting preemptor" victim.out
scancel "$preemptor"
release_requeue_hold "$victim"
check "victim runs again" wait_job_state "$victim" RUNNING 60
check "victim resumed from its checkpoint" wait_for 30 resumed victim.err "$victim" 1
check "the resume line says when and why the checkpoint was taken" \
  grep -q "^cedana: resumed from checkpoint [^ ]* taken at $(date +%Y-%m-%d) [0-9:]* [A-Z]* on preemption (job $victim, restart 1, label victim)$" victim.err
check "victim counts on" wait_for 30 counter_at_least victim.out $((at_preempt + 3))
# The seeds' preemptor writes to victim.out and victim.err too: a job without cedana, it
# emptied them as it started. Then the resumed victim appended to them (job_submit/cedana opens
# an enabled job's output in append mode), going on where its checkpoint was.
resumed_after_preemptor() { # victim.out: the preemptor's 0..K, then the victim's AT.. consecutive
  python3 - "$1" <<'PY'
import re, sys
text = open("victim.out").read()
at = int(sys.argv[1])
n = [int(m) for m in re.findall(r"^Counter: (\d+)$", text, re.M)]
ok = text.startswith("Starting preemptor") and "Starting victim" not in text
ok = ok and any(n[:i] == list(range(i)) and n[i] in (at, at + 1) and n[i:] == list(range(n[i], n[i] + len(n) - i))
                for i in range(len(n)))
if not ok: print(f"victim.out: {n[:5]} ... {n[-5:]} (checkpoint at {at})", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
check "victim.out: the preemptor's lines, then the resumed victim's from $at_preempt on, each once" \
  resumed_after_preemptor "$at_preempt"
check "SLURM counted one restart" bash -c "scontrol show job $victim | grep -q 'Restarts=1'"
check "one resume per restart" test "$(count_of victim.err 'resumed from checkpoint')" = 1
# Preempted twice more, by preemptors that write elsewhere: nothing empties the victim's output
# now, each requeue's run goes on after the one before.
for restart in 2 3; do
  preemptor=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
  check "preemption $restart: checkpointed" wait_for 30 bash -c "[ \$(grep -c 'taken on preemption' victim.err) -ge $((restart - 1)) ]"
  at=$(last_counter victim.out)
  wait_job_state "$victim" PENDING 120
  wait_job_state "$preemptor" RUNNING 60
  scancel "$preemptor"
  release_requeue_hold "$victim"
  check "preemption $restart: resumed as restart $restart" \
    wait_for 60 resumed victim.err $victim $restart
  check "preemption $restart: counts on" wait_for 30 counter_at_least victim.out $((at + 3))
  check "preemption $restart: victim.out kept, each counter once (checkpoint at $at)" \
    resumed_after_preemptor "$at_preempt"
done
check "victim.err: one resume line per restart, in order" \
  bash -c "grep -o '(job $victim, restart [0-9]*' victim.err | tr -d '(' | paste -sd, | grep -qx 'job $victim, restart 1,job $victim, restart 2,job $victim, restart 3'"
check "victim.err: and the checkpoint lines of the runs since the seeds' preemptor emptied it" \
  test "$(count_of victim.err 'taken on preemption')" = 2
check "SLURM counted three restarts" bash -c "scontrol show job $victim | grep -q 'Restarts=3'"
workload_pid() { # the host pid of job $1's running workload
  "$CEDANA" ps --json | python3 -c "import json,sys
for w in json.load(sys.stdin):
    if w.get('job_id') == sys.argv[1] and w.get('status') == 'running': print(w['pid'])" "$1"
}
wpid=$(workload_pid "$victim")
if [ "${CLUSTER_PROCTRACK:-linuxproc}" = cgroup ]; then
  check "the restored workload is in the requeued job's cgroup" grep -q "job_$victim/" "/proc/$wpid/cgroup"
fi

# --- scancel, then the same job again: it resumes ---------------------------------------------
scancel "$victim"
check "scancel takes a checkpoint" wait_for 20 grep -q "taken on SIGTERM" victim.err
check "no process of the cancelled job survives it" wait_for 20 bash -c "! kill -0 $wpid 2>/dev/null"
at_cancel=$(last_counter victim.out)
again=$(submit victim.sbatch)
check "resubmitted victim runs" wait_job_state "$again" RUNNING 30
check "resubmitted victim resumed (new job id $again)" wait_for 30 resumed victim.err $again 0
check "and counts on from $at_cancel" wait_for 30 counter_at_least victim.out $((at_cancel + 3))
first=$(first_counter victim.out)
# (a new job's first start empties its output files, as SLURM would: the count starts where the
# cancelled job's checkpoint was)
check "first counter after resubmission follows the cancelled run ($first vs $at_cancel)" \
  test "$first" -ge "$at_cancel" -a "$first" -le $((at_cancel + 1))

# --- cedana dump slurm JOBID: a checkpoint and the job keeps running --------------------------
ck=$("$CEDANA" dump slurm "$again" 2>/dev/null)
check "cedana dump slurm $again" test -n "$ck"
n=$(last_counter victim.out)
check "the job keeps running after cedana dump slurm" wait_for 10 counter_at_least victim.out $((n + 2))
scancel "$again"; wait_for 20 grep -q "taken on SIGTERM" victim.err

# --- what each checkpoint records; --open-mode=truncate keeps SLURM's truncation ----------------
reasons_of() { # reasons_of LABEL: "reason/restarts" of its checkpoints, oldest first
  "$CEDANA" checkpoints --label "$1" --json | python3 -c "import json, sys
print(' '.join(f\"{c.get('reason') or '-'}/{c.get('restart_count', 0)}\" for c in reversed(json.load(sys.stdin))))"
}
check "victim's checkpoints say why and at which restart ($(reasons_of victim))" \
  test "$(reasons_of victim)" = "preemption/0 preemption/1 preemption/2 scancel/3 manual/0 scancel/0"
frozen_within_total() { "$CEDANA" checkpoints --label victim --json | python3 -c "import json, sys
cs = json.load(sys.stdin)
sys.exit(0 if cs and all(0 < c['frozen_ms'] <= c['duration_ms'] for c in cs) else 1)"; }
check "each says how long the job was frozen, within how long it took" frozen_within_total
check "cedana checkpoints shows the reason and the times" \
  bash -c "\"$CEDANA\" checkpoints --label victim | grep -E ' preemption +[0-9.]+s +[0-9.]+s ' | grep -q ' good$'"
trunc=$(submit --open-mode=truncate --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=trunc -o trunc.out -e trunc.err victim.sbatch)
check "--open-mode=truncate: the job counts" wait_for 30 counter_at_least trunc.out 3
wait_for 20 grep -q "started under cedana" trunc.err
scontrol requeue "$trunc"
check "--open-mode=truncate: scontrol requeue checkpoints it" wait_for 30 grep -q "taken on SIGTERM" trunc.err
release_requeue_hold "$trunc"
check "--open-mode=truncate: resumed after the requeue" wait_for 60 resumed trunc.err "$trunc" 1
check "--open-mode=truncate: that checkpoint's reason is requeue" test "$(reasons_of trunc)" = requeue/0
emptied_at_requeue() { ! grep -q 'Starting victim' trunc.out && [ "$(first_counter trunc.out)" -gt 0 ] 2>/dev/null; }
check "--open-mode=truncate: SLURM emptied the output at the requeue, as without cedana" wait_for 20 emptied_at_requeue
scancel "$trunc"

# --- a new label starts fresh; a job without CEDANA_ENABLE is untouched -----------------------
fresh=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=fresh-label -o fresh.out -e fresh.err victim.sbatch)
check "a new label starts fresh" wait_for 30 grep -q "Counter: 2" fresh.out
check "from 0" grep -q "Starting victim" fresh.out
check "under cedana" grep -q "started under cedana" fresh.err
plain=$(submit --export=ALL -o plain.out -e plain.err "$HERE/../workloads/counter.sh")
check "a job without CEDANA_ENABLE runs" wait_for 30 grep -q "Counter: 2" plain.out
check "untouched by cedana (no message)" bash -c "! grep -q cedana plain.err"
check "no workload for it" bash -c "! \"$CEDANA\" ps --json | grep -q '\"job_id\": \"$plain\"'"
scancel "$fresh" "$plain"

# --- a job that ran to its end: the next one with its label starts fresh ------------------------
short_job() {
  submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=shortjob,COUNTER_MAX=25,COUNTER_SLEEP=0.2 \
    -o short.out -e short.err "$HERE/../workloads/counter.sh"
}
short=$(short_job)
wait_for 30 counter_at_least short.out 8
check "shortjob: checkpointed by hand mid-run" test -n "$("$CEDANA" dump slurm "$short" 2>/dev/null)"
check "shortjob: runs to its end" wait_job_state "$short" COMPLETED 60
short=$(short_job)
check "shortjob again: starts fresh and says why" \
  wait_for 30 grep -q "cedana: label shortjob: its last run finished at .* (exit 0); .*starting fresh" short.err
starts_at_zero() { [ "$(first_counter short.out)" = 0 ] && counter_at_least short.out 2; }
check "shortjob again: counts from 0, not from the finished run's checkpoint" wait_for 30 starts_at_zero
check "shortjob again: not resumed" bash -c "! grep -q 'resumed from checkpoint' short.err"
scancel "$short"

# --- time limits: a 1-minute job that counts for 90 s runs through its limit -------------------
# (once: it takes about three minutes). The site switch is the node daemon's config.
if [ "${CLUSTER_PROCTRACK:-}" = linuxproc ]; then
  stop_daemon
  start_node_daemon "$T/daemon.out" CEDANA_SLURM_REQUEUE_ON_TIMEOUT=1 || { say "daemon did not restart"; exit 1; }
  long=$(submit --time=1 --open-mode=append -o long.out -e long.err \
    --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=longsim,CEDANA_REQUEUE_ON_TIMEOUT=1,COUNTER_MAX=90 \
    "$HERE/../workloads/counter.sh")
  # A requeued job is held ~120 s (BeginTime): start it again at once, until it has ended. A
  # requeue passes through states that look final for a moment: only a lasting one ends the wait.
  # Not in the second of the requeue: slurmd refuses a credential issued in the same second as
  # the kill of the job's previous run (the run then FAILS; see release_requeue_hold).
  final=0 pending=0
  for _ in $(seq 400); do
    st=$(job_state "$long")
    [ "$st" = COMPLETED ] && break
    case $st in
      FAILED | TIMEOUT | CANCELLED | NODE_FAIL) final=$((final + 1)); [ $final -ge 10 ] && break ;;
      *) final=0 ;;
    esac
    if [ "$st" = PENDING ]; then pending=$((pending + 1)); else pending=0; fi
    [ $pending -ge 2 ] && scontrol update jobid="$long" StartTime=now >/dev/null 2>&1
    sleep 1
  done
  check "time limit: checkpointed before SLURM's limit" grep -q "taken on its time limit" long.err
  requeued_twice() { grep -q "job $long requeued at its time limit (restart 1 of at most 10)" long.err &&
                     grep -q "job $long requeued at its time limit (restart 2 of" long.err; }
  check "time limit: requeued at its limit, and again" requeued_twice
  check "time limit: each run resumed the one before" resumed long.err $long 2
  check "time limit: the job completed (not TIMEOUT)" \
    bash -c "scontrol show job $long | grep -q 'JobState=COMPLETED'"
  counted_through() { consecutive long.out && [ "$(first_counter long.out)" = 0 ] && [ "$(last_counter long.out)" = 90 ]; }
  check "time limit: one continuous count from 0 to 90 through the requeues" counted_through
  restarts=$(scontrol show job "$long" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
  check "time limit: scontrol show job counts the restarts (${restarts:-none})" test "${restarts:-0}" -ge 2
  # SLURM's accounting (slurmdbd) keeps one record per run: the requeued ones, then the last.
  runs_recorded() {
    local runs; runs=$(sacct -D -X -n -P -j "$long" -o State 2>/dev/null)
    [ "$(grep -c '^REQUEUED' <<<"$runs")" -ge 2 ] && grep -qx COMPLETED <<<"$runs"
  }
  check "time limit: sacct shows the requeued runs and the completed one" wait_for 20 runs_recorded
  say "sacct: $(sacct -D -X -n -P -j "$long" -o JobID,State,Start,End 2>&1 | tr '\n' ' ')"
  [ "$FAILED" -gt 0 ] && { say "--- long.err"; cat long.err >&2; say "--- long.out (tail)"; tail -3 long.out >&2; }
  stop_daemon
  start_daemon || { say "daemon did not restart"; exit 1; }
fi

# --- an invalid label is rejected at submission ------------------------------------------------
out=$(sbatch --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT='bad/label' victim.sbatch 2>&1)
check "invalid label rejected at submission" bash -c "! grep -q 'Submitted' <<<'$out'"
check "with a message saying what a label may contain" grep -q "letters, digits" <<<"$out"

# --- a job with real state in two processes: same result as an uninterrupted run -------------
expect=$("$MEMSTATE" 150 /dev/null 0 2>/dev/null | grep -o 'checksum [0-9a-f]*')
export MEMSTATE FLAG=$T/mem.flag
mem=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=memjob memjob.sbatch)
check "memjob ready" wait_for 120 bash -c "[ \$(grep -c ready memjob.out) -ge 2 ]"
scancel "$mem"
check "memjob checkpointed on scancel" wait_for 60 grep -q "taken on SIGTERM" memjob.err
mem2=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=memjob memjob.sbatch)
check "memjob resumed" wait_for 60 grep -q "resumed from checkpoint" memjob.err
touch "$FLAG"
check "memjob finished" wait_job_state "$mem2" COMPLETED 120
check "both processes kept their state (PASS, no FAIL)" bash -c "grep -q 'main: PASS' memjob.out && ! grep -q FAIL memjob.out"
check "each child's checksum equals an uninterrupted run's ($expect)" \
  test "$(grep -c "child0: PASS $expect" memjob.out)" = 1
rm -f "$FLAG"

# A checkpoint that cannot end within the grace time (600 MiB in 1 s, partition tight): the job
# hears it in its stderr as soon as it is preempted, not after it was lost.
j=$(submit -p tight --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=tight -o tight.out -e tight.err \
  --wrap "$MEMSTATE 600 $FLAG 0")
check "a 600 MiB job in a partition with a grace time of 1 s" wait_for 120 grep -q ready tight.out
p=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null -e /dev/null preemptor.sbatch)
check "preempted, it is told its checkpoint will not finish in time" \
  wait_for 30 grep -q "the checkpoint on preemption is not expected to finish in time: 6[0-9][0-9] MiB to dump" tight.err
scancel "$p" "$j"
wait_for 90 bash -c "[ -z \"\$(squeue -h -j $j,$p)\" ]"

# --- faults -----------------------------------------------------------------------------------
# The newest checkpoint corrupted: the job resumes from the previous one.
newest=$(ls -t "$T"/checkpoints/root/victim | head -n1)
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xff; open(p,'wb').write(bytes(b))" \
  "$T/checkpoints/root/victim/$newest/stream-0"
j=$(submit victim.sbatch)
check "with the newest checkpoint corrupted the job resumes from an older one" \
  wait_for 40 resumed victim.err $j 0
check "the corrupted one was skipped" grep -q "skipped checkpoint $newest" victim.err
scancel "$j"; wait_for 20 grep -q "taken on SIGTERM" victim.err

# The node daemon down when an enabled job starts: the job runs, un-checkpointed, and says why.
stop_daemon
j=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=nodaemon -o nodaemon.out -e nodaemon.err victim.sbatch)
check "with the daemon down the job still runs" wait_for 30 grep -q "Counter: 2" nodaemon.out
check "and says why it is not checkpointed" grep -q "runs without checkpointing" nodaemon.err
scancel "$j"
start_daemon

# A dump that cannot finish within the grace time: the dump is held after CRIU for 75 s
# (CEDANA_TEST_PAUSE_AT=dump:dumped:75, longer than GraceTime + KillWait) and then fails, as a
# hanging CRIU that reaches its deadline does. The job must be requeued, leave no process
# behind once the dump gave up, and resume from the older checkpoint.
j=$(submit --export=ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=grace -o grace.out -e grace.err victim.sbatch)
wait_for 30 counter_at_least grace.out 3
older=$("$CEDANA" dump slurm "$j" 2>/dev/null)
at_older=$(last_counter grace.out)
check "an older checkpoint of the grace job" test -n "$older"
wpid=$(workload_pid "$j")
stop_daemon
start_node_daemon "$T/daemon.out" CEDANA_TEST_PAUSE_AT=dump:dumped:75 || { say "daemon did not restart"; exit 1; }
p=$(submit -p high -w compute-01 --cpus-per-task="$(nproc)" -o /dev/null preemptor.sbatch)
check "the held dump does not stop SLURM from requeueing the job" wait_job_state "$j" PENDING 150
check "the dump gives up and no process of the job is left" \
  wait_for 120 bash -c "! kill -0 $wpid 2>/dev/null"
# SLURM killed the proxy before the dump returned, so the job's stderr may say nothing: the
# daemon's log is the evidence.
# (Under proctrack/cgroup SLURM kills the job's processes itself, before the dump gives up.)
check "the daemon rolled the dump back (logged)" \
  wait_for 120 grep -q "dump: checkpoint .* failed; continued [0-9]* processes of pid $wpid" "$T/daemon.log"
scancel "$p"
stop_daemon
start_daemon
release_requeue_hold "$j"
check "the requeued job resumes from the older checkpoint" \
  wait_for 60 grep -q "resumed from checkpoint $older" grace.err
check "its counter goes on from the older checkpoint ($at_older)" \
  wait_for 30 counter_at_least grace.out $((at_older + 3))
scancel "$j"

# --- destroy puts every file back byte-identical ------------------------------------------------
check "cedana slurm destroy" "$CEDANA" slurm destroy
check "slurm.conf byte-identical after setup + destroy" cmp -s /etc/slurm/slurm.conf "$T/slurm.conf.before"
check "plugstack.conf byte-identical after setup + destroy" cmp -s /etc/slurm/plugstack.conf "$T/plugstack.conf.before"

say ""
say "slurm_test.sh: $PASSED passed, $FAILED failed"
if [ "$FAILED" -gt 0 ]; then
  say "--- daemon log ---"; tail -30 "$T/daemon.log" >&2
  say "--- slurmctld log ---"; tail -15 /var/log/slurm/slurmctld.log >&2
  exit 1
fi
