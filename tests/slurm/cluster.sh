#!/bin/bash
# A real single-node SLURM cluster on this machine for the tests and the demo: munge,
# slurmctld and slurmd with the seeds' two-partition preemption setup. The node is named
# compute-01 (as in the seeds' commands) and reached at 127.0.0.1. Source this file, then
# `cluster_start` / `cluster_stop`. Everything started is stopped by pid; files replaced in
# /etc are put back.
#
# CLUSTER_PROCTRACK=linuxproc|cgroup selects the process tracking (default linuxproc).

CLUSTER_CONF=/etc/slurm/slurm.conf
CLUSTER_SPOOL=/var/spool/cedana-cluster
CLUSTER_LOGS=/var/log/slurm
CLUSTER_NODE=compute-01

_cluster_log() { printf 'cluster: %s\n' "$*" >&2; }

cluster_write_conf() {
  local cpus proctrack task
  cpus=$(nproc)
  case "${CLUSTER_PROCTRACK:-linuxproc}" in
    cgroup) proctrack=proctrack/cgroup; task=task/affinity,task/cgroup
            [ -f /etc/slurm/cgroup.conf ] || { : >/etc/slurm/cgroup.conf; CLUSTER_CREATED_CGROUP_CONF=1; } ;;
    *) proctrack=proctrack/linuxproc; task=task/none ;;
  esac
  mkdir -p "$CLUSTER_SPOOL/slurmctld" /var/spool/slurmd "$CLUSTER_LOGS" /etc/slurm
  if [ -f "$CLUSTER_CONF" ] && [ ! -f "$CLUSTER_CONF.cluster-backup" ]; then
    cp -p "$CLUSTER_CONF" "$CLUSTER_CONF.cluster-backup"
  fi
  cat >"$CLUSTER_CONF" <<CONF
# Written by tests/slurm/cluster.sh (cedana's local test cluster).
ClusterName=cedana
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$CLUSTER_SPOOL/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$CLUSTER_LOGS/slurmctld.log
SlurmdLogFile=$CLUSTER_LOGS/slurmd.log
ProctrackType=$proctrack
TaskPlugin=$task
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobRequeue=1
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
SchedulerParameters=preempt_reorder_count=100,preempt_strict_order
NodeName=$CLUSTER_NODE NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$CLUSTER_NODE Default=YES MaxTime=INFINITE State=UP PreemptMode=REQUEUE PriorityTier=1 GraceTime=15
PartitionName=high  Nodes=$CLUSTER_NODE MaxTime=INFINITE State=UP PreemptMode=REQUEUE PriorityTier=2
CONF
}

_pid_of() { [ -f "$1" ] && cat "$1" 2>/dev/null; }
_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

cluster_start() {
  cluster_write_conf
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  [ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  if ! _alive "$(_pid_of /run/munge/munged.pid)"; then
    sudo_munge=(runuser -u munge -- munged --force)
    id munge >/dev/null 2>&1 || sudo_munge=(munged --force)
    "${sudo_munge[@]}" || { _cluster_log "munged failed to start"; return 1; }
    CLUSTER_STARTED_MUNGE=1
  fi
  rm -f /run/slurmctld.pid /run/slurmd.pid
  slurmctld -c 2>>"$CLUSTER_LOGS/start.err" || { _cluster_log "slurmctld failed: $(tail -3 "$CLUSTER_LOGS/slurmctld.log")"; return 1; }
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  slurmd -N "$CLUSTER_NODE" 2>>"$CLUSTER_LOGS/start.err" || { _cluster_log "slurmd failed: $(tail -3 "$CLUSTER_LOGS/slurmd.log")"; return 1; }
  for _ in $(seq 150); do
    sinfo -h -n "$CLUSTER_NODE" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && { _cluster_log "up: $(sinfo -h -o '%P %t %D' | tr '\n' ' ')"; return 0; }
    sleep 0.2
  done
  _cluster_log "node did not become idle: $(sinfo 2>&1 | tail -3)"; return 1
}

# Stops slurmd and slurmctld (by their pid files: `cedana slurm setup` may have restarted
# them), munged if we started it, and puts slurm.conf back.
cluster_stop() {
  local p
  scancel --user=root 2>/dev/null || true
  for f in /run/slurmd.pid /run/slurmctld.pid; do
    p=$(_pid_of "$f")
    if _alive "$p"; then
      kill "$p"
      for _ in $(seq 50); do _alive "$p" || break; sleep 0.2; done
      _alive "$p" && kill -9 "$p"
    fi
  done
  if [ -n "${CLUSTER_STARTED_MUNGE:-}" ]; then
    p=$(_pid_of /run/munge/munged.pid); _alive "$p" && kill "$p"
  fi
  if [ -f "$CLUSTER_CONF.cluster-backup" ]; then mv "$CLUSTER_CONF.cluster-backup" "$CLUSTER_CONF"; else rm -f "$CLUSTER_CONF"; fi
  [ -n "${CLUSTER_CREATED_CGROUP_CONF:-}" ] && rm -f /etc/slurm/cgroup.conf
  rm -rf "$CLUSTER_SPOOL"
}

# Waits until job $1 is in state $2 (squeue/scontrol name, e.g. RUNNING, PENDING).
job_state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
wait_job_state() { # job state seconds
  local deadline=$((SECONDS + ${3:-60}))
  until [ "$(job_state "$1")" = "$2" ]; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.5; done
}
