#!/bin/bash
# A real single-node SLURM cluster on this machine for the tests and the demo: munge,
# slurmctld and slurmd with the seeds' two-partition preemption setup. The node is named
# compute-01 (as in the seeds' commands) and reached at 127.0.0.1. Source this file, then
# `cluster_start` / `cluster_stop`. Everything started is stopped by pid; files replaced in
# /etc are put back.
#
# CLUSTER_PROCTRACK=linuxproc|cgroup selects the process tracking (default linuxproc).
# CLUSTER_ACCOUNTING=1 adds job accounting (slurmdbd and MariaDB, tests/slurm/accounting.sh), so
# that `sacct` answers.
#
# Besides the seeds' two partitions, "tight" is like debug with a grace time of 1 s: too short for
# a large job's checkpoint.
#
# CLUSTER_CPUS=N makes each node declare N CPUs (default: the machine's), so that many jobs fit
# on this small machine at once (slurmd then takes the configured count: config_overrides).
#
# CLUSTER_SLURMCTLD_PORT and CLUSTER_SLURMD_PORT (SLURM's 6817 and 6818 by default) let a
# second cluster run beside this machine's (the version matrix's, in its own root file system).
#
# CLUSTER_NODES=2 adds a second node, compute-02, on this same machine: SLURM's
# multiple-slurmd mode is not compiled into Debian's slurmd, so compute-02's slurmd runs in a
# network namespace (cedana-b, 10.77.0.2, joined to the host's 10.77.0.1 by a veth pair) and a
# mount namespace where its spool dir, pid file, /run/cedana and /etc/cedana are private: it has
# its own node daemon and config, and shares everything else (munge's socket, the checkpoint
# dir, which so plays shared storage). Start it with `cluster_start_node_b CONFIG` after
# cluster_start (and after `cedana slurm setup`, which restarts only the host's slurmd).

CLUSTER_CONF=/etc/slurm/slurm.conf
CLUSTER_SPOOL=/var/spool/cedana-cluster
CLUSTER_LOGS=/var/log/slurm
CLUSTER_NODE=compute-01
CLUSTER_NODE_B=compute-02
CLUSTER_NETNS=cedana-b
CLUSTER_NODE_B_DIR=/var/lib/cedana-cluster-node-b
source "$(dirname "${BASH_SOURCE[0]}")/accounting.sh"

_cluster_log() { printf 'cluster: %s\n' "$*" >&2; }

cluster_write_conf() {
  local cpus proctrack task overrides=
  cpus=${CLUSTER_CPUS:-$(nproc)}
  [ "$cpus" -gt "$(nproc)" ] && overrides=SlurmdParameters=config_overrides
  case "${CLUSTER_PROCTRACK:-linuxproc}" in
    cgroup) proctrack=proctrack/cgroup; task=task/affinity,task/cgroup
            [ -f /etc/slurm/cgroup.conf ] || { : >/etc/slurm/cgroup.conf; CLUSTER_CREATED_CGROUP_CONF=1; } ;;
    *) proctrack=proctrack/linuxproc; task=task/none ;;
  esac
  mkdir -p "$CLUSTER_SPOOL/slurmctld" /var/spool/slurmd "$CLUSTER_LOGS" /etc/slurm
  if [ -f "$CLUSTER_CONF" ] && [ ! -f "$CLUSTER_CONF.cluster-backup" ]; then
    cp -p "$CLUSTER_CONF" "$CLUSTER_CONF.cluster-backup"
  fi
  local ctl_addr=127.0.0.1 nodes=$CLUSTER_NODE pid_file=/run/slurmd.pid log=slurmd.log node_b=
  if [ "${CLUSTER_NODES:-1}" = 2 ]; then
    ctl_addr=10.77.0.1 nodes=$CLUSTER_NODE,$CLUSTER_NODE_B pid_file=/run/slurmd-node/slurmd.pid log=slurmd-%n.log
    node_b="NodeName=$CLUSTER_NODE_B NodeHostname=$(hostname) NodeAddr=10.77.0.2 CPUs=$cpus State=UNKNOWN"
    mkdir -p /run/slurmd-node
  fi
  cat >"$CLUSTER_CONF" <<CONF
# Written by tests/slurm/cluster.sh (cedana's local test cluster).
ClusterName=cedana
SlurmctldHost=localhost($ctl_addr)
SlurmctldPort=${CLUSTER_SLURMCTLD_PORT:-6817}
SlurmdPort=${CLUSTER_SLURMD_PORT:-6818}
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$CLUSTER_SPOOL/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=$pid_file
SlurmctldLogFile=$CLUSTER_LOGS/slurmctld.log
SlurmdLogFile=$CLUSTER_LOGS/$log
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
$overrides
NodeName=$CLUSTER_NODE NodeHostname=$(hostname) NodeAddr=$ctl_addr CPUs=$cpus State=UNKNOWN
$node_b
PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP PreemptMode=REQUEUE PriorityTier=1 GraceTime=15
PartitionName=high  Nodes=$nodes MaxTime=INFINITE State=UP PreemptMode=REQUEUE PriorityTier=2
PartitionName=tight Nodes=$nodes MaxTime=INFINITE State=UP PreemptMode=REQUEUE PriorityTier=1 GraceTime=1
CONF
  [ -n "${CLUSTER_ACCOUNTING:-}" ] && accounting_conf_lines >>"$CLUSTER_CONF"
  return 0
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
  rm -f /run/slurmctld.pid /run/slurmd.pid /run/slurmd-node/slurmd.pid
  [ "${CLUSTER_NODES:-1}" = 2 ] && { _cluster_network_up || return 1; }
  [ -n "${CLUSTER_ACCOUNTING:-}" ] && { accounting_start cedana || return 1; }
  slurmctld -c 2>>"$CLUSTER_LOGS/start.err" || { _cluster_log "slurmctld failed: $(tail -3 "$CLUSTER_LOGS/slurmctld.log")"; return 1; }
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  slurmd -N "$CLUSTER_NODE" 2>>"$CLUSTER_LOGS/start.err" || { _cluster_log "slurmd failed: $(tail -3 "$CLUSTER_LOGS/slurmd.log")"; return 1; }
  for _ in $(seq 150); do
    sinfo -h -n "$CLUSTER_NODE" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && { _cluster_log "up: $(sinfo -h -o '%P %t %D' | tr '\n' ' ')"; return 0; }
    sleep 0.2
  done
  _cluster_log "node did not become idle: $(sinfo 2>&1 | tail -3)"; return 1
}

_cluster_network_up() {
  ip netns add "$CLUSTER_NETNS" &&
    ip link add cdn-a type veth peer name cdn-b &&
    ip link set cdn-b netns "$CLUSTER_NETNS" &&
    ip addr add 10.77.0.1/24 dev cdn-a && ip link set cdn-a up &&
    ip netns exec "$CLUSTER_NETNS" ip addr add 10.77.0.2/24 dev cdn-b &&
    ip netns exec "$CLUSTER_NETNS" ip link set cdn-b up &&
    ip netns exec "$CLUSTER_NETNS" ip link set lo up ||
    { _cluster_log "cannot set up the network namespace $CLUSTER_NETNS"; return 1; }
}

# cluster_start_node_b CONFIG: starts compute-02 (CLUSTER_NODES=2): its own node daemon with
# CONFIG as its /etc/cedana/config.json, then its slurmd, in the namespaces described above.
# Waits until SLURM sees the node idle.
cluster_start_node_b() {
  local d=$CLUSTER_NODE_B_DIR
  rm -rf "$d" && mkdir -p "$d/run-cedana" "$d/run-slurmd" "$d/spool" "$d/etc-cedana" || return 1
  cp "$1" "$d/etc-cedana/config.json" && chmod 600 "$d/etc-cedana/config.json"
  mkdir -p /run/cedana /etc/cedana
  # A new mount namespace inside the network namespace; the binds stay in it, and so do the
  # daemons started from it. (Not `ip netns exec`: it remounts /sys, and slurmd then finds no
  # cgroup file system.)
  nsenter --net="/run/netns/$CLUSTER_NETNS" -- unshare --mount --propagation private bash -c "
    mount --bind '$d/run-cedana' /run/cedana && mount --bind '$d/run-slurmd' /run/slurmd-node &&
    mount --bind '$d/spool' /var/spool/slurmd && mount --bind '$d/etc-cedana' /etc/cedana || exit 1
    setsid '${CEDANA:-cedana}' daemon start >>'$d/daemon.out' 2>&1 </dev/null &
    echo \$! >'$d/daemon.pid'
    for _ in \$(seq 100); do '${CEDANA:-cedana}' daemon status >/dev/null 2>&1 && break; sleep 0.2; done
    slurmd -N '$CLUSTER_NODE_B'" 2>>"$CLUSTER_LOGS/start.err" ||
    { _cluster_log "compute-02 failed to start: $(tail -3 "$CLUSTER_LOGS/start.err")"; return 1; }
  for _ in $(seq 150); do
    sinfo -h -n "$CLUSTER_NODE_B" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && return 0
    sleep 0.2
  done
  _cluster_log "compute-02 did not become idle: $(sinfo 2>&1 | tail -3)"; return 1
}

_cluster_stop_pid() {
  local p=$1
  _alive "$p" || return 0
  kill "$p"
  for _ in $(seq 50); do _alive "$p" || break; sleep 0.2; done
  _alive "$p" && kill -9 "$p"
}

# Stops slurmd and slurmctld (by their pid files: `cedana slurm setup` may have restarted
# them), compute-02 and its namespaces, accounting, munged if we started it, and puts slurm.conf
# back.
cluster_stop() {
  local p
  scancel --user=root 2>/dev/null || true
  if [ -d "$CLUSTER_NODE_B_DIR" ]; then
    _cluster_stop_pid "$(_pid_of "$CLUSTER_NODE_B_DIR/run-slurmd/slurmd.pid")"
    bash "$(dirname "${BASH_SOURCE[0]}")/../kill_workloads.sh" "$CLUSTER_NODE_B_DIR/state"
    _cluster_stop_pid "$(_pid_of "$CLUSTER_NODE_B_DIR/daemon.pid")"
    rm -rf "$CLUSTER_NODE_B_DIR"
  fi
  if ip netns list 2>/dev/null | grep -qw "$CLUSTER_NETNS"; then
    # What compute-02 started and is still there (a slurmstepd whose slurmd went first retries
    # for minutes): it would keep the namespace, and its veth, alive past `ip netns del`.
    for p in $(ip netns pids "$CLUSTER_NETNS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$CLUSTER_NETNS"
  fi
  for f in /run/slurmd.pid /run/slurmd-node/slurmd.pid /run/slurmctld.pid; do
    _cluster_stop_pid "$(_pid_of "$f")"
  done
  accounting_stop
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
