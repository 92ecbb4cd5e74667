#!/usr/bin/env bash
# Builds every binary into ./bin and starts a single-host cluster whose
# PBS_HOME is ./pbs_home (override with PBS_HOME=...). Run it again to
# restart; "scripts/start.sh stop" stops it. Ports default to the PBS ones
# and follow PBS_BATCH_SERVICE_PORT etc. when set.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
home=${PBS_HOME:-$root/pbs_home}
bin=$root/bin

stop() {
	for d in pbs_sched pbs_mom pbs_server; do
		pidf=$home/$d.pid
		if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
			kill "$(cat "$pidf")" || true
			for _ in $(seq 50); do kill -0 "$(cat "$pidf")" 2>/dev/null || break; sleep 0.1; done
		fi
		rm -f "$pidf"
	done
}

if [ "${1:-}" = "stop" ]; then
	stop
	echo "stopped the cluster in $home"
	exit 0
fi

mkdir -p "$home" "$bin"
"$root/scripts/build.sh" "$bin"

cat > "$home/pbs.conf" <<CONF
PBS_HOME=$home
PBS_EXEC=$bin
PBS_SERVER=$(hostname -s 2>/dev/null || hostname)
PBS_BATCH_SERVICE_PORT=${PBS_BATCH_SERVICE_PORT:-15001}
PBS_MOM_SERVICE_PORT=${PBS_MOM_SERVICE_PORT:-15002}
PBS_SCHEDULER_SERVICE_PORT=${PBS_SCHEDULER_SERVICE_PORT:-15004}
CONF
export PBS_CONF_FILE=$home/pbs.conf

stop
nohup "$bin/pbs_server" >"$home/pbs_server.out" 2>&1 &
echo $! >"$home/pbs_server.pid"
for _ in $(seq 100); do
	"$bin/qstat" -B >/dev/null 2>&1 && break
	if ! kill -0 "$(cat "$home/pbs_server.pid")" 2>/dev/null; then
		echo "pbs_server failed to start:" >&2
		cat "$home/pbs_server.out" >&2
		exit 1
	fi
	sleep 0.1
done

node=$(hostname -s 2>/dev/null || hostname)
if ! "$bin/qmgr" -c "list node $node" >/dev/null 2>&1; then
	"$bin/qmgr" -c "create node $node Mom=localhost,Port=${PBS_MOM_SERVICE_PORT:-15002}"
fi
if [ "$(id -u)" = 0 ]; then
	# PBS runs root's jobs only when acl_roots allows them.
	"$bin/qmgr" -c "set server acl_roots = root@$node"
fi
nohup "$bin/pbs_mom" >"$home/pbs_mom.out" 2>&1 &
echo $! >"$home/pbs_mom.pid"
for _ in $(seq 100); do
	"$bin/qmgr" -c "list node $node" 2>/dev/null | grep -q 'state = free' && break
	sleep 0.1
done
nohup "$bin/pbs_sched" >"$home/pbs_sched.out" 2>&1 &
echo $! >"$home/pbs_sched.pid"

cat <<MSG
pbs_server, pbs_sched and pbs_mom (node $node) are running in
PBS_HOME=$home (logs in server_logs/, sched_logs/, mom_logs/ there).
In your shell:

  export PBS_CONF_FILE=$home/pbs.conf PATH=$bin:\$PATH
  id=\$(echo 'echo hello from \$PBS_JOBID on \$(hostname)' | qsub)
  sleep 1; qstat -x \$id; cat STDIN.o\${id%%.*}
  pbsnodes -a

Stop it with: scripts/start.sh stop
MSG
