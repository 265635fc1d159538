#!/bin/bash
# Inet sockets on this kernel (6.16+ refuses SO_PASSCRED/SO_PASSSEC on them; our CRIU patch
# 0007 reads them only where the socket family has them): a workload serving on listening TCP
# and bound UDP sockets, IPv4 and IPv6 loopback, is dumped and restored, and answers on all four
# afterwards, counting on. (Connected TCP sockets are a different matter: --tcp-established.)
source "$(dirname "$0")/lib.sh"
start_daemon || exit 1
PORT=$((20000 + RANDOM % 20000))

# ask tcp4|tcp6|udp4|udp6: the tick the workload answers with on that socket, or nothing.
ask() {
  python3 - "$1" "$PORT" <<'PY' 2>/dev/null
import socket, sys
kind, base = sys.argv[1], int(sys.argv[2])
family = socket.AF_INET6 if kind.endswith("6") else socket.AF_INET
host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
port = base + {"tcp4": 0, "tcp6": 1, "udp4": 2, "udp6": 3}[kind]
if kind.startswith("tcp"):
    s = socket.create_connection((host, port), timeout=2)
    print(s.makefile().readline().split()[1])
else:
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(b"?", (host, port))
    print(s.recv(64).decode().split()[1])
PY
}
answers_all() { # answers_all AT_LEAST: every socket answers with a tick >= AT_LEAST
  local k n
  for k in tcp4 tcp6 udp4 udp6; do
    n=$(ask $k); [ -n "$n" ] && [ "$n" -ge "$1" ] || return 1
  done
}

w=$("$CEDANA" run --label sockets --output "$T/sockets.out" -- python3 "$WORKLOADS/sockets.py" "$PORT" 2>/dev/null)
wait_for 20 at_least "$T/sockets.out" "tick " 3
check "the workload answers on TCP and UDP, IPv4 and IPv6" answers_all 0
ck=$(dump_id "$w")
check "a tree holding listening TCP and bound UDP sockets is dumped" test -n "$ck"
check "its ports are free once the tree is gone" wait_for 10 bash -c "! ss -Hltn 'sport = :$PORT' | grep -q ."
n=$(last_number "$T/sockets.out" "tick ")
r=$(restore_id "$ck")
check "it is restored" test -n "$r"
# Only the restored tree can answer: the dumped one is gone (checked above).
restored_answers() { [ -n "$r" ] && is_status "$r" running && answers_all "${n:-0}"; }
check "the restored tree answers on all four sockets, counting on from ${n:-nothing}" wait_for 10 restored_answers
output_counts_on() { [ -n "$r" ] && sequence_ok "$T/sockets.out" "tick "; }
check "its output goes on without a gap or repeat" output_counts_on
[ -n "$r" ] && "$CEDANA" kill "$r" >/dev/null
finish
