#!/usr/bin/env bash
# peer_slurm_storm.sh: issue 24's polling storm against a PEER batch system (Slurm from Debian
# bookworm) on this machine, for `pbsbench -exp storm` to put beside its own figures.
#
# The set-up is ../shared/bench/peer_slurm.sh's, copied (that script runs its benchmarks at top
# level, so it cannot be sourced): from scratch and idempotent, it installs slurmctld/slurmd/
# slurm-client/munge only when missing, makes /etc/munge/munge.key only when absent, and runs
# everything private to one temp dir (a mktemp dir peer_slurm_storm.XXXXXX): its own munged, its
# own slurm.conf, state and spool, free loopback ports picked per run. Nothing of the project is
# read or written. Every daemon is started by this script, recorded by PID (in $T/pids) and
# stopped by PID; a previous run of this script that was killed hard is reaped at start the same
# way (PIDs from its pids file, checked against /proc/PID/cmdline naming that run's dir), never by
# process name. peer_slurm.sh's own dirs (peer_slurm.*) are not this script's to reap.
#
# The storm, with the same knobs as pbsbench (environment, defaults = issue 24's numbers):
#   fill    STORM_JOBS (10000) held jobs, `sbatch --hold --wrap=true` from STORM_FILL_LOOPS (16)
#   quiet   STORM_LOOPS (8) loops of `sbatch --hold --wrap=true` for STORM_WINDOW_S (20) s, each
#           call timed by bash's clock; slurmctld's cpu over the window; then those jobs cancelled
#   control (unless STORM_CONTROL=false) the pollers below, running `squeue --version` (the
#           processes, no request), and the same submit loops again
#   poll    STORM_POLLERS (64) pollers, each running `squeue -j <its STORM_PER_POLLER (50) ids>`
#           every STORM_INTERVAL_US (1000000) us (at once when a poll took longer), the first polls
#           spread over one interval; once each has polled, the same submit loops again
# Output (stdout): one "RESULT STORM key=value..." line and a "SUMMARY" line; notes go to stderr,
# prefixed "# ". The keys, for each phase (quiet_, control_, poll_): submit_p50_s, submit_p99_s,
# submit_per_s, submit_failed; cpu_per_s (slurmctld's cpu seconds per second of the window);
# server_submit_ms and server_status_ms (slurmctld's own mean time per REQUEST_SUBMIT_BATCH_JOB and
# per REQUEST_JOB_INFO*, from sdiag); and for the phases with pollers <phase>_poll_p50_s,
# _poll_p99_s, _polls_per_s, _poll_failed, _poll_client_ms (cpu of one squeue process, mean).
# Percentiles are nearest-rank (the value at rank ceil(p*n)), as pbsbench computes its own.
# Other knobs: PEER_SCHED_PARAMS, PEER_EPILOG, PEER_NODE_CPUS, PEER_KEEP=1, PEER_SHOW_CONF=1,
# PEER_NO_INSTALL=1 as in peer_slurm.sh; STORM_BUDGET_S (bound on the run, 400).

set -u
export LC_ALL=C
umask 022

JOBS=${STORM_JOBS:-10000}
FILL_LOOPS=${STORM_FILL_LOOPS:-16}
POLLERS=${STORM_POLLERS:-64}
PER=${STORM_PER_POLLER:-50}
INTERVAL_US=${STORM_INTERVAL_US:-1000000}
LOOPS=${STORM_LOOPS:-8}
WINDOW_S=${STORM_WINDOW_S:-20}
CONTROL=${STORM_CONTROL:-true}
BUDGET_S=${STORM_BUDGET_S:-400}
SCHED_TYPE=${PEER_SCHED_TYPE:-sched/backfill}
# peer_slurm.sh's choices (see there): Slurm's high-throughput set less the two latency trades,
# a no-op Epilog, two cpus.
SCHED_PARAMS=${PEER_SCHED_PARAMS-bf_continue,bf_interval=300,bf_min_age_reserve=10800,bf_resolution=600,bf_yield_interval=1000000,partition_job_depth=500,sched_max_job_start=200}
EPILOG=${PEER_EPILOG:-/bin/true}
NODE_CPUS=${PEER_NODE_CPUS:-2}
(( JOBS >= POLLERS * PER )) || { echo "FAIL: STORM_JOBS=$JOBS < $POLLERS pollers x $PER jobs"; exit 1; }

note() { echo "# $*" >&2; }
now_us() { echo "${EPOCHREALTIME/./}"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b-a)/1e6}'; }          # us,us -> s
# stdin: one number a line -> the nearest-rank quantile p (seconds from microseconds)
quantile_s() { sort -n | awk -v p="$1" 'NF{v[++n]=$1} END{if(n==0){print "NaN"; exit} r=int(p*n); if(r<p*n) r++; if(r<1) r=1; printf "%.6f\n", v[r]/1e6}'; }

RUN_START=$(now_us)
over_budget() { (( $(now_us) - RUN_START > BUDGET_S * 1000000 )); }

# Processes of one run, found by the tag every process it execs carries: SLURM_CONF=<dir>/slurm.conf
# in /proc/PID/environ (daemons, clients, slurmstepd and job processes alike). Ended by PID.
run_pids() { # dir -> PIDs other than this shell
  local f p
  for f in $(grep -lzxF "SLURM_CONF=$1/slurm.conf" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}; [ "$p" != $$ ] && echo "$p"
  done
}
sweep_run() { # dir : TERM, then KILL, whatever processes still carry that run's tag
  local p left
  left=$(run_pids "$1")
  [ -n "$left" ] || return 0
  note "ending leftover processes of $1: $(echo $left)"
  for p in $left; do kill "$p" 2>/dev/null; done
  sleep 2
  for p in $(run_pids "$1"); do kill -9 "$p" 2>/dev/null; done
  return 0
}

# ---------------------------------------------------------------- reap a hard-killed earlier run
for old in "$(dirname "$(mktemp -u)")"/peer_slurm_storm.*; do
  [ -d "$old" ] || continue
  # A run still going on (its script alive) is left alone entirely.
  if [ -f "$old/owner" ]; then
    o=$(cat "$old/owner")
    [ -n "$o" ] && [ -r "/proc/$o/cmdline" ] && tr '\0' ' ' <"/proc/$o/cmdline" | grep -q peer_slurm_storm && continue
  fi
  if [ -f "$old/pids" ]; then
    # "name pid" lines; client loops (forks of this script) first, so they start nothing new.
    while read -r name p; do
      [ -n "$p" ] && [ -r "/proc/$p/cmdline" ] || continue
      mark="$old/"; [ "$name" = loop ] && mark=peer_slurm_storm
      if tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF "$mark"; then
        note "reaping $name pid $p left by an earlier run ($old)"; kill "$p" 2>/dev/null
        for _ in $(seq 50); do [ -e "/proc/$p" ] || break; sleep 0.1; done
        [ -r "/proc/$p/cmdline" ] && tr '\0' ' ' <"/proc/$p/cmdline" | grep -qF "$mark" && kill -9 "$p" 2>/dev/null
      fi
    done < <(grep '^loop ' "$old/pids"; grep -v '^loop ' "$old/pids")
  fi
  sweep_run "$old"      # slurmstepd (retrying to reach a dead slurmctld) and orphaned clients
  # Leave a dir alone while any process still runs from it (e.g. a run going on right now).
  busy=0
  for c in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$c" 2>/dev/null | grep -qF "$old/" && { busy=1; break; }; done
  [ $busy = 0 ] && rm -rf "$old"
done

# ---------------------------------------------------------------- install what is missing
missing=0
for b in slurmctld slurmd sbatch squeue scontrol scancel sinfo munged munge; do
  command -v "$b" >/dev/null 2>&1 || missing=1
done
[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/select_cons_tres.so ] || [ -n "$(find /usr/lib -name select_cons_tres.so 2>/dev/null | head -1)" ] || missing=1
if [ $missing = 1 ]; then
  [ "${PEER_NO_INSTALL:-0}" = 1 ] && { echo "FAIL: slurm/munge missing and PEER_NO_INSTALL=1"; exit 1; }
  note "installing slurmctld slurmd slurm-client munge from Debian"
  export DEBIAN_FRONTEND=noninteractive
  APTLOG=$(mktemp -t peer_slurm_storm_apt.XXXXXX); timeout 240 apt-get update -q >"$APTLOG" 2>&1
  timeout 240 apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
    >>"$APTLOG" 2>&1 || { echo "FAIL: apt-get install: $(tail -3 "$APTLOG" | tr '\n' ' ')"; exit 1; }
  rm -f "$APTLOG"
fi
if [ ! -s /etc/munge/munge.key ]; then
  note "creating /etc/munge/munge.key"
  install -d -m 0700 -o munge -g munge /etc/munge 2>/dev/null || install -d -m 0700 /etc/munge
  if command -v mungekey >/dev/null 2>&1; then mungekey --create --keyfile=/etc/munge/munge.key --force
  else dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; fi
  chown munge:munge /etc/munge/munge.key 2>/dev/null; chmod 0600 /etc/munge/munge.key
fi
VERSION=$(slurmctld -V 2>/dev/null | awk '{print $2}')

# ---------------------------------------------------------------- private run dir, ports
T=$(mktemp -d -t peer_slurm_storm.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
echo $$ >"$T/owner"                  # marks the dir as in use for any other run's reaper
chmod 0711 "$T"                      # munged insists the socket's parent dirs be traversable by all
mkdir -m 0755 "$T/munge"
mkdir -p "$T/state" "$T/spool/slurmd" "$T/work" "$T/log" "$T/phase"
: >"$T/pids"
NODE=$(hostname -s)

# Ports below the ephemeral range (thousands of short client connections sit in TIME_WAIT there),
# and not used by any socket at all, listening or not.
EPH_LO=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null); EPH_LO=${EPH_LO:-32768}
USED=$(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}' | sort -u)
port_free() { ! grep -qx "$1" <<<"$USED"; }
BASE=""
for _ in $(seq 200); do
  b=$(( 10000 + RANDOM % (EPH_LO - 10010) ))
  ok=1; for p in $b $((b+1)) $((b+2)); do port_free $p || ok=0; done
  [ $ok = 1 ] && { BASE=$b; break; }
done
[ -n "$BASE" ] || { echo "FAIL: no free ports"; rm -rf "$T"; exit 1; }
CTLD_PORTS="$BASE-$((BASE+1))"      # two listening ports for slurmctld, as the HTC guide suggests
SLURMD_PORT=$((BASE+2))

CONF=$T/slurm.conf
cat >"$CONF" <<EOF
# peer_slurm_storm.sh: single host, private to $T
ClusterName=peer
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORTS
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket.2
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/slurmd
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PriorityType=priority/basic
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=$SCHED_TYPE
$( [ -n "$SCHED_PARAMS" ] && echo "SchedulerParameters=$SCHED_PARAMS" )
MaxJobCount=200000
MaxArraySize=100001
MinJobAge=2
MessageTimeout=30
ReturnToService=2
InactiveLimit=0
KillWait=5
Waittime=0
SlurmdTimeout=300
SlurmctldTimeout=120
$( [ "$EPILOG" != none ] && echo "Epilog=$EPILOG" )
$( [ "$NODE_CPUS" != "$(nproc)" ] && echo "SlurmdParameters=config_overrides" )
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$NODE_CPUS State=UNKNOWN
PartitionName=batch Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$CONF
[ "${PEER_SHOW_CONF:-0}" = 1 ] && sed 's/^/# conf: /' "$CONF" >&2

start_bg() { # name cmd... : start in background, record PID
  local name=$1; shift
  "$@" >"$T/log/$name.out" 2>&1 &
  local p=$!
  echo "$name $p" >>"$T/pids"
  eval "PID_$name=$p"
}

stop_pid() { # pid [grace seconds]
  local p=$1 g=${2:-10} i
  [ -e "/proc/$p" ] || { wait "$p" 2>/dev/null; return 0; }
  kill "$p" 2>/dev/null
  for ((i = 0; i < g * 10; i++)); do [ -e "/proc/$p" ] || break; sleep 0.1; done
  [ -e "/proc/$p" ] && { note "pid $p ignored SIGTERM; SIGKILL"; kill -9 "$p" 2>/dev/null; }
  wait "$p" 2>/dev/null
  return 0
}

CLEANED=0
cleanup() {
  [ $CLEANED = 1 ] && return; CLEANED=1
  : >"$T/phase/stop"                 # pollers still going end at their next look
  # Jobs still running would leave slurmstepd behind; cancel and give them a moment first.
  if [ -n "${PID_slurmctld:-}" ] && [ -e "/proc/$PID_slurmctld" ]; then
    if [ "$(timeout 10 squeue -h -t R,CG 2>/dev/null | wc -l)" != 0 ]; then
      timeout 20 scancel -u root >/dev/null 2>&1
      for _ in $(seq 50); do [ "$(timeout 5 squeue -h -t R,CG 2>/dev/null | wc -l)" = 0 ] && break; sleep 0.2; done
    fi
  fi
  [ -n "${PID_slurmd:-}" ] && stop_pid "$PID_slurmd" 10
  [ -n "${PID_slurmctld:-}" ] && stop_pid "$PID_slurmctld" 15
  [ -n "${PID_munged:-}" ] && stop_pid "$PID_munged" 5
  sweep_run "$T"
  cd / || true
  if [ "${PEER_KEEP:-0}" = 1 ]; then note "kept $T"; else rm -rf "$T"; fi
}
die() {
  echo "FAIL: $*"
  for f in slurmctld.log slurmd.log; do [ -f "$T/log/$f" ] && { note "--- tail $f"; tail -15 "$T/log/$f" | sed 's/^/#   /' >&2; }; done
  for f in munged.out slurmctld.out slurmd.out; do [ -s "$T/log/$f" ] && { note "--- tail $f"; tail -5 "$T/log/$f" | sed 's/^/#   /' >&2; }; done
  cleanup; exit 1
}
trap cleanup EXIT
trap 'die "interrupted"' INT TERM

# ---------------------------------------------------------------- start munged, slurmctld, slurmd
install -m 0600 -o root -g root /etc/munge/munge.key "$T/munge/munge.key"   # munged as root wants a root-owned key
start_bg munged munged -F --num-threads 10 --socket="$T/munge/munge.socket.2" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" --key-file="$T/munge/munge.key"
for _ in $(seq 100); do [ -S "$T/munge/munge.socket.2" ] && break; [ -e "/proc/$PID_munged" ] || break; sleep 0.1; done
munge -S "$T/munge/munge.socket.2" -n 2>/dev/null | unmunge -S "$T/munge/munge.socket.2" >/dev/null 2>&1 || die "munged not working"

start_bg slurmctld slurmctld -D -i -f "$CONF"
for _ in $(seq 150); do timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' && break; [ -e "/proc/$PID_slurmctld" ] || break; sleep 0.2; done
timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld did not come up"
start_bg slurmd slurmd -D -N "$NODE" -f "$CONF"
ok=0
for _ in $(seq 150); do
  st=$(timeout 5 sinfo -h -N -n "$NODE" -o %T 2>/dev/null)
  [ "$st" = idle ] && { ok=1; break; }
  [ -e "/proc/$PID_slurmd" ] || break
  sleep 0.2
done
[ $ok = 1 ] || die "node $NODE not idle (state '${st:-?}')"
note "slurm $VERSION up in $(secs "$RUN_START" "$(now_us)") s: ctld ports $CTLD_PORTS, slurmd $SLURMD_PORT, dir $T"

cd "$T/work" || die "cd"

bounded_wait() { # limit_s pid... : wait for our client loops; past the limit, end them by PID
  local lim=$1; shift
  printf 'loop %s\n' "$@" >>"$T/pids"
  ( sleep "$lim" & s=$!; trap 'kill $s 2>/dev/null; exit 0' TERM; wait $s
    echo "$*" >"$T/watchdog.fired"; kill "$@" 2>/dev/null ) &
  local wd=$!
  wait "$@"
  kill "$wd" 2>/dev/null; wait "$wd" 2>/dev/null
  if [ -f "$T/watchdog.fired" ]; then rm -f "$T/watchdog.fired"; note "client loops still running after ${lim}s: ended"; fi
}
ctld_ticks() { awk '{print $14+$15}' "/proc/$PID_slurmctld/stat"; }
# slurmctld's own count and total time (us) of each RPC type (sdiag), one "type count total" a line
rpc_stats() {
  timeout 30 sdiag 2>/dev/null | awk '/^Remote Procedure Call statistics by message type/ {on = 1; next}
    /^Remote Procedure Call statistics by user/ {on = 0}
    on && /count:/ {c = t = ""; for (i = 2; i <= NF; i++) { if ($i ~ /^count:/) c = substr($i, 7); if ($i ~ /^total_time:/) t = substr($i, 12) }
      print $1, c, t}'
}
# mean ms per RPC of the types matching a regex, between two rpc_stats files; NaN if none
rpc_mean_ms() { # before after regex
  awk -v re="$3" 'NR == FNR {c[$1] = $2; t[$1] = $3; next} $1 ~ re {n += $2 - c[$1]; s += $3 - t[$1]}
    END {if (n > 0) printf "%.4f", s / n / 1000; else print "NaN"}' "$1" "$2"
}
HZ=$(getconf CLK_TCK)

# ---------------------------------------------------------------- fill: held jobs
fill_loop() { # idx count end_us
  local k
  for ((k = 0; k < $2; k++)); do
    (( ${EPOCHREALTIME/./} < $3 )) || break
    sbatch --hold --parsable --wrap=true 2>>"$T/log/fill.err" >>"$T/fill.$1"
  done
}
per=$(( JOBS / FILL_LOOPS )); extra=$(( JOBS - per * FILL_LOOPS ))
# Fill within what is left of the budget, keeping 3 windows and 60 s for the rest.
left=$(( BUDGET_S - ($(now_us) - RUN_START) / 1000000 - 3 * WINDOW_S - 60 ))
[ $left -gt 10 ] || die "no time left to fill"
t0=$(now_us); end=$(( t0 + left * 1000000 ))
lp=(); for i in $(seq "$FILL_LOOPS"); do n=$per; [ "$i" -le "$extra" ] && n=$((n + 1)); fill_loop "$i" "$n" "$end" & lp+=($!); done
bounded_wait $(( left + 30 )) "${lp[@]}"
mapfile -t IDS < <(cat "$T"/fill.* | cut -d';' -f1 | grep -E '^[0-9]+$' | sort -n)
note "${#IDS[@]} held jobs submitted in $(secs "$t0" "$(now_us)") s"
(( ${#IDS[@]} >= POLLERS * PER )) || die "only ${#IDS[@]} held jobs, $POLLERS pollers of $PER need $(( POLLERS * PER ))"

# ---------------------------------------------------------------- one phase of submissions
submit_loop() { # idx end_us : each call timed by bash's clock around it
  local f=0 s e
  while (( ${EPOCHREALTIME/./} < $2 )); do
    s=${EPOCHREALTIME/./}
    if sbatch --hold --parsable --wrap=true >>"$T/phase/ids.$1" 2>>"$T/log/submit.err"; then
      e=${EPOCHREALTIME/./}; echo $((e - s)) >>"$T/phase/lat.$1"
    else f=$((f + 1)); fi
  done
  echo "$f" >"$T/phase/fail.$1"
}
RESULT=""
submit_phase() { # name : the loops for the window; figures appended to RESULT; then cancels the jobs
  local name=$1 k0 k1 t0 t1 end lp i n failed
  rpc_stats >"$T/phase/rpc.0"
  k0=$(ctld_ticks); t0=$(now_us); end=$(( t0 + WINDOW_S * 1000000 ))
  lp=(); for i in $(seq "$LOOPS"); do submit_loop "$i" "$end" & lp+=($!); done
  bounded_wait $(( WINDOW_S + 60 )) "${lp[@]}"
  t1=$(now_us); k1=$(ctld_ticks)
  rpc_stats >"$T/phase/rpc.1"
  PHASE_END=$t1
  n=$(cat "$T"/phase/lat.* 2>/dev/null | wc -l)
  RESULT+=" ${name}_submit_p50_s=$(cat "$T"/phase/lat.* | quantile_s 0.5)"
  RESULT+=" ${name}_submit_p99_s=$(cat "$T"/phase/lat.* | quantile_s 0.99)"
  RESULT+=" ${name}_submit_per_s=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", n/((b-a)/1e6)}')"
  failed=$(cat "$T"/phase/fail.* | awk '{s+=$1} END{print s+0}')
  RESULT+=" ${name}_submit_failed=$failed"
  [ "$failed" = 0 ] || note "$name: $failed submissions failed, the last: $(tail -1 "$T/log/submit.err")"
  RESULT+=" ${name}_cpu_per_s=$(awk -v a="$k0" -v b="$k1" -v t0="$t0" -v t1="$t1" -v hz="$HZ" 'BEGIN{printf "%.3f", (b-a)/hz/((t1-t0)/1e6)}')"
  RESULT+=" ${name}_server_submit_ms=$(rpc_mean_ms "$T/phase/rpc.0" "$T/phase/rpc.1" '^REQUEST_SUBMIT_BATCH_JOB$')"
  RESULT+=" ${name}_server_status_ms=$(rpc_mean_ms "$T/phase/rpc.0" "$T/phase/rpc.1" '^REQUEST_JOB_INFO')"
  note "$name: $n submissions in $(secs "$t0" "$t1") s; job status RPCs: $(awk 'NR == FNR {c[$1] = $2; next}
    $1 ~ /^REQUEST_JOB_INFO/ && $2 > c[$1] {printf "%s %d ", $1, $2 - c[$1]}' "$T/phase/rpc.0" "$T/phase/rpc.1")"
  # Cancel the phase's jobs, so that every phase starts from the same queue.
  cat "$T"/phase/ids.* | cut -d';' -f1 | grep -E '^[0-9]+$' | xargs -r -n 1000 timeout 120 scancel
  rm -f "$T"/phase/ids.* "$T"/phase/lat.* "$T"/phase/fail.*
}

# ---------------------------------------------------------------- quiet
over_budget && die "over budget before the quiet phase"
submit_phase quiet

# ---------------------------------------------------------------- pollers: the storm
poll_loop() { # idx first_us args... : squeue args every interval until phase/stop exists
  local i=$1 next=$2 d dd s e fd
  shift 2
  exec {fd}<>"$T/sleep.fifo"         # a read that times out is a sleep without a process
  while [ ! -e "$T/phase/stop" ]; do
    d=$(( next - ${EPOCHREALTIME/./} ))
    if (( d > 0 )); then printf -v dd '%d.%06d' $((d / 1000000)) $((d % 1000000)); read -r -t "$dd" -u "$fd" _; fi
    [ -e "$T/phase/stop" ] && break
    s=${EPOCHREALTIME/./}
    timeout 60 squeue "$@" >/dev/null 2>>"$T/log/poll.err" || echo "$s" >>"$T/phase/pollfail.$i"
    e=${EPOCHREALTIME/./}
    echo "$s $((e - s))" >>"$T/phase/poll.$i"
    next=$(( next + INTERVAL_US )); (( next < e )) && next=$e
  done
  # The cpu of the squeue processes this poller ran (the children's line of `times`, which must
  # run in this shell, not in a pipeline's subshell), in us.
  times >"$T/phase/times.$i"
  awk 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1e6}' "$T/phase/times.$i" >"$T/phase/pollcpu.$i"
}
mkfifo "$T/sleep.fifo" || die "mkfifo"
storm_phase() { # name mode : pollers (mode ids: squeue -j of their jobs; version: squeue --version) beside the submit loops
  local name=$1 mode=$2 t0 i n pp polls
  over_budget && die "over budget before the $name phase"
  rm -f "$T"/phase/*
  t0=$(now_us); pp=()
  for ((i = 0; i < POLLERS; i++)); do
    if [ "$mode" = ids ]; then
      poll_loop "$i" $(( t0 + i * INTERVAL_US / POLLERS )) -j "$(IFS=,; echo "${IDS[*]:$((i * PER)):$PER}")" & pp+=($!)
    else
      poll_loop "$i" $(( t0 + i * INTERVAL_US / POLLERS )) --version & pp+=($!)
    fi
  done
  printf 'loop %s\n' "${pp[@]}" >>"$T/pids"
  # Every poller has polled once before the submissions start.
  for _ in $(seq 600); do
    n=0; for ((i = 0; i < POLLERS; i++)); do [ -s "$T/phase/poll.$i" ] && n=$((n + 1)); done
    (( n == POLLERS )) && break
    sleep 0.1
  done
  (( n == POLLERS )) || die "only $n of $POLLERS pollers polled within 60 s"
  FROM=$(now_us)
  note "$name: $POLLERS pollers ($mode), every $INTERVAL_US us"
  submit_phase "$name"
  : >"$T/phase/stop"
  bounded_wait 120 "${pp[@]}"
  polls=$(cat "$T"/phase/poll.* | awk -v a="$FROM" -v b="$PHASE_END" '$1 >= a && $1 < b {print $2}')
  RESULT+=" ${name}_poll_p50_s=$(quantile_s 0.5 <<<"$polls")"
  RESULT+=" ${name}_poll_p99_s=$(quantile_s 0.99 <<<"$polls")"
  RESULT+=" ${name}_polls_per_s=$(grep -c . <<<"$polls" | awk -v a="$FROM" -v b="$PHASE_END" '{printf "%.1f", $1/((b-a)/1e6)}')"
  RESULT+=" ${name}_poll_failed=$(cat "$T"/phase/pollfail.* 2>/dev/null | wc -l)"
  RESULT+=" ${name}_poll_client_ms=$(awk -v n="$(cat "$T"/phase/poll.* | wc -l)" '{s += $1} END {if (n > 0) printf "%.3f", s / n / 1000}' "$T"/phase/pollcpu.*)"
}
[ "$CONTROL" = true ] && storm_phase control version
storm_phase poll ids

# ---------------------------------------------------------------- stop, summary
LOAD=$(cut -d' ' -f1 /proc/loadavg)
echo "RESULT STORM jobs=${#IDS[@]} pollers=$POLLERS per_poller=$PER loops=$LOOPS window_s=$WINDOW_S load1_end=$LOAD$RESULT"
cleanup
trap - EXIT INT TERM
echo "SUMMARY peer=slurm-$VERSION host=$NODE cpus=$NODE_CPUS sched=$SCHED_TYPE epilog=$EPILOG total_s=$(secs "$RUN_START" "$(now_us)")"
