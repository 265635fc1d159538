#!/bin/bash
# SLURM job accounting for the local test cluster (sourced by cluster.sh when
# CLUSTER_ACCOUNTING=1): a MariaDB server and slurmdbd, both from Debian's archive, on loopback
# ports, with their data and config in a directory of their own (slurmdbd reads slurmdbd.conf
# beside the slurm.conf that SLURM_CONF names, so /etc is not touched). So `sacct` answers
# about the cluster's jobs. Everything started is stopped by pid.

ACCOUNTING_DIR=/var/tmp/cedana-cluster-accounting
ACCOUNTING_DB_PORT=13306
ACCOUNTING_DBD_PORT=16819

# The lines slurm.conf needs to send its jobs to this slurmdbd.
accounting_conf_lines() {
  printf 'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\nAccountingStoragePort=%s\n' \
    "$ACCOUNTING_DBD_PORT"
}

# Starts MariaDB and slurmdbd and registers the cluster $1; before slurmctld starts.
accounting_start() {
  local d=$ACCOUNTING_DIR
  rm -rf "$d" && mkdir -p "$d/etc" || return 1
  mariadb-install-db --user=root --datadir="$d/data" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve >"$d/install.log" 2>&1 ||
    { _cluster_log "accounting: mariadb-install-db failed: $(tail -3 "$d/install.log")"; return 1; }
  setsid mariadbd --no-defaults --user=root --datadir="$d/data" --socket="$d/mysqld.sock" \
    --pid-file="$d/mariadbd.pid" --port="$ACCOUNTING_DB_PORT" --bind-address=127.0.0.1 \
    --skip-name-resolve --innodb-lock-wait-timeout=900 --log-error="$d/mariadbd.log" \
    </dev/null >/dev/null 2>&1 &
  for _ in $(seq 100); do
    mariadb --no-defaults -h127.0.0.1 -P"$ACCOUNTING_DB_PORT" -uroot -e 'select 1' >/dev/null 2>&1 && break
    sleep 0.2
  done
  : >"$d/etc/slurm.conf"  # slurmdbd reads only slurmdbd.conf from this dir
  cat >"$d/etc/slurmdbd.conf" <<CONF
# Written by tests/slurm/accounting.sh (cedana's local test cluster).
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$ACCOUNTING_DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$ACCOUNTING_DB_PORT
StorageUser=root
StorageLoc=cedana_acct
PidFile=$d/slurmdbd.pid
LogFile=$d/slurmdbd.log
CONF
  chmod 600 "$d/etc/slurmdbd.conf"
  SLURM_CONF=$d/etc/slurm.conf slurmdbd ||
    { _cluster_log "accounting: slurmdbd failed: $(tail -3 "$d/slurmdbd.log" 2>/dev/null)"; return 1; }
  for _ in $(seq 100); do
    sacctmgr -i add cluster "$1" >/dev/null 2>&1 && sacctmgr -n -P list cluster 2>/dev/null | grep -q "^$1|" &&
      { _cluster_log "accounting: slurmdbd up (MariaDB on 127.0.0.1:$ACCOUNTING_DB_PORT)"; return 0; }
    sleep 0.2
  done
  _cluster_log "accounting: slurmdbd does not answer: $(tail -3 "$d/slurmdbd.log" 2>/dev/null)"; return 1
}

accounting_stop() {
  [ -d "$ACCOUNTING_DIR" ] || return 0
  _cluster_stop_pid "$(_pid_of "$ACCOUNTING_DIR/slurmdbd.pid")"
  _cluster_stop_pid "$(_pid_of "$ACCOUNTING_DIR/mariadbd.pid")"
  rm -rf "$ACCOUNTING_DIR"
}
