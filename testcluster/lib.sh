# shellcheck shell=bash disable=SC2034 # variables here are used by the scripts that source lib.sh
# Shared by up.sh, down.sh, token.sh and smoke.sh: knobs, derived names and
# the start/stop machinery of the slurmbench test cluster. See README.md.

TC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=rootfs.sh
. "$TC_DIR/rootfs.sh"

# ---- knobs (environment) ----------------------------------------------------
# INSTANCE (1-9) lets several test clusters run side by side on one machine
# (parallel worktrees): it picks their own base directory, subnet, ports and
# network names. Unset is the one default cluster.
INSTANCE=${SLURMBENCH_CLUSTER_INSTANCE:-}
if [[ -n $INSTANCE ]]; then
	[[ $INSTANCE =~ ^[1-9]$ ]] || { echo "SLURMBENCH_CLUSTER_INSTANCE must be 1-9, got '$INSTANCE'" >&2; exit 1; }
	_base_default=/srv/slurmbench-$INSTANCE _subnet_default=10.77.$((10 + INSTANCE))
	_rest_default=$((6820 + 10 * INSTANCE)) CTL_PORT=$((6817 + 10 * INSTANCE))
else
	_base_default=/srv/slurmbench _subnet_default=10.77.0 _rest_default=6820 CTL_PORT=6817
fi
BASE=${SLURMBENCH_CLUSTER_DIR:-$_base_default}
CACHE=${SLURMBENCH_CLUSTER_CACHE:-/var/cache/slurmbench-testcluster}
ENV_FILE=${SLURMBENCH_CLUSTER_ENV:-$BASE/env}
SHARED=${SLURMBENCH_SHARED_DIR:-$BASE/shared}
NUM_NODES=${SLURMBENCH_CLUSTER_NUM_NODES:-9}
GPUS=${SLURMBENCH_CLUSTER_GPUS:-4}
CPUS=${SLURMBENCH_CLUSTER_CPUS:-8}
MEM_MB=${SLURMBENCH_CLUSTER_MEM:-16000}
REST_PORT=${SLURMBENCH_CLUSTER_REST_PORT:-$_rest_default}
PARTITION=${SLURMBENCH_CLUSTER_PARTITION:-debug}
SUBNET=${SLURMBENCH_CLUSTER_SUBNET:-$_subnet_default}
TOKEN_LIFESPAN=${SLURMBENCH_CLUSTER_TOKEN_LIFESPAN:-31536000}
MIRROR=${SLURMBENCH_CLUSTER_MIRROR:-http://deb.debian.org/debian}
HOST_HOSTS=${SLURMBENCH_CLUSTER_HOST_HOSTS:-0}
# A host directory shown read-only as /usr/local/bin on every node (stand-ins
# such as a bash `enroot`); empty = none.
NODE_BIN=${SLURMBENCH_CLUSTER_NODE_BIN:-}

# ---- fixed names --------------------------------------------------------------
JOB_USER=slurmtest
JOB_UID=1000
REST_USER=slurmrest
CTL_NAME=slurmctl
NODE_PREFIX=node
NETNS_PREFIX=slurmbench$INSTANCE-
VETH_PREFIX=sbv$INSTANCE-
BRIDGE=slurmbench${INSTANCE:-0}
[[ -n $INSTANCE ]] && BRIDGE=slurmbenchi$INSTANCE
# Canonical path: /proc/PID/root shows it resolved.
ROOTFS=$(realpath -m "$BASE")/rootfs
RUN=$BASE/run
LOG=$BASE/log
STATE=$RUN/state
# The nodes' mount namespace (see up.sh), kept by a bind mount of its
# nsfs file under a private mount of NSDIR.
NSDIR=$BASE/ns
MNTNS=$NSDIR/mnt
# Mounts the host makes below MOUNT_DIR show on the nodes too (up.sh).
MOUNT_DIR=$SHARED/mnt
MARKER=.slurmbench-rootfs
HOSTS_BEGIN="# BEGIN slurmbench-testcluster$INSTANCE (managed by testcluster/up.sh)"
HOSTS_END="# END slurmbench-testcluster$INSTANCE"
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf '[testcluster %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# now_ms prints a millisecond timestamp, for phase timings.
now_ms() { date +%s%3N; }
fmt_ms() { printf '%d.%03ds' $(($1 / 1000)) $(($1 % 1000)); }
since() { fmt_ms $(($(now_ms) - $1)); }

validate_knobs() {
	local k v
	for k in NUM_NODES GPUS CPUS MEM_MB REST_PORT TOKEN_LIFESPAN; do
		v=${!k}
		[[ $v =~ ^[0-9]+$ && $v -gt 0 ]] || die "$k must be a positive integer, got '$v'"
	done
	((NUM_NODES <= 200)) || die "at most 200 nodes fit the /24 (got $NUM_NODES)"
	((GPUS <= 64)) || die "at most 64 GPUs per node (got $GPUS)"
	[[ $SUBNET =~ ^10\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
		die "SLURMBENCH_CLUSTER_SUBNET must be the first three octets of a 10.x /24, got '$SUBNET'"
	[[ $SHARED == /* && $BASE == /* && $CACHE == /* && $ENV_FILE == /* ]] ||
		die "directories must be absolute paths"
	[[ $PARTITION =~ ^[A-Za-z0-9_-]+$ ]] || die "bad partition name '$PARTITION'"
	[[ -z $NODE_BIN || ($NODE_BIN == /* && -d $NODE_BIN) ]] ||
		die "SLURMBENCH_CLUSTER_NODE_BIN must be an existing absolute directory, got '$NODE_BIN'"
}

node_name() { printf '%s%d' "$NODE_PREFIX" "$1"; }
node_addr() { printf '%s.%d' "$SUBNET" $((10 + $1)); }
ctl_addr() { printf '%s.1' "$SUBNET"; }
# The test registry listens on the bridge address (nodes and host reach it).
registry_addr() { printf '%s:5000' "$(ctl_addr)"; }
# registry_up: GET /v2/ answers 200.
registry_up() {
	timeout 5 bash -c 'exec 3<>"/dev/tcp/${0%:*}/${0##*:}" || exit 1
		printf "GET /v2/ HTTP/1.0\r\nHost: %s\r\n\r\n" "$0" >&3
		head -n1 <&3' "$(registry_addr)" 2>/dev/null | grep -q ' 200'
}
node_names_csv() {
	local i out=
	for ((i = 1; i <= NUM_NODES; i++)); do out+=${out:+,}$(node_name "$i"); done
	printf '%s' "$out"
}
node_addrs_csv() {
	local i out=
	for ((i = 1; i <= NUM_NODES; i++)); do out+=${out:+,}$(node_name "$i")=$(node_addr "$i"); done
	printf '%s' "$out"
}

# in_root runs a command inside the rootfs from the host network namespace,
# with a clean environment (host variables must not leak into Slurm tools).
in_root() {
	chroot "$ROOTFS" /usr/bin/env -i PATH="$CHROOT_PATH" HOME=/root LANG=C.UTF-8 "$@"
}

# in_root_quick: in_root with a 5 s timeout and no stderr (teardown must not hang).
in_root_quick() { timeout 5 chroot "$ROOTFS" /usr/bin/env -i PATH="$CHROOT_PATH" "$@" 2>/dev/null; }

# ---- cache key and rootfs -----------------------------------------------------
cache_key() {
	local arch
	arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
	{ cat "$TC_DIR/rootfs.sh"; printf '%s\n' "$ROOTFS_SUITE" "$MIRROR" "$arch"; } |
		sha256sum | cut -c1-16
}


# ensure_host_tools installs missing host packages with apt (bookworm host).
# Arguments are pairs "command:package"; a package is installed when its
# command is missing (or, for files, when the path is missing).
APT_UPDATED=0
ensure_host_tools() {
	local pair cmd pkg missing=()
	for pair in "$@"; do
		cmd=${pair%%:*} pkg=${pair#*:}
		if [[ $cmd == /* ]]; then [[ -e $cmd ]] && continue
		else command -v "$cmd" >/dev/null 2>&1 && continue
		fi
		missing+=("$pkg")
	done
	((${#missing[@]})) || return 0
	log "installing host packages: ${missing[*]}"
	if ((APT_UPDATED == 0)); then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

# ---- process helpers ------------------------------------------------------------
# is_ours PID: the process is alive and runs in our rootfs: chrooted into it
# (slurmctld, slurmrestd), or in the nodes' mount namespace whose root is the
# rootfs (slurmd and its jobs: readlink shows "/" there, so the root is
# compared by device and inode), or a descendant of such a process (job tasks
# inside crun containers have the container's root). This guards
# every kill against recycled PIDs and against touching anything else.
is_ours() {
	local pid=$1 root stat rest depth
	root=$(readlink "/proc/$pid/root" 2>/dev/null) || return 1
	[[ $root == "$ROOTFS" || $root == "$ROOTFS (deleted)" ]] && return 0
	for ((depth = 0; depth < 32; depth++)); do
		[[ /proc/$pid/root/ -ef $ROOTFS/ ]] && return 0
		read -r stat <"/proc/$pid/stat" 2>/dev/null || return 1
		rest=${stat##*) }
		read -r _ pid _ <<<"$rest"
		((pid > 1)) || return 1
	done
	return 1
}

# rooted_pids lists every process chrooted into our rootfs.
rooted_pids() {
	local d pid
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		is_ours "$pid" && printf '%s\n' "$pid"
	done
	return 0
}

pidfile_pids() {
	local f pid
	for f in "$RUN"/*.pid; do
		[[ -f $f ]] || continue
		pid=$(<"$f")
		[[ $pid =~ ^[0-9]+$ ]] && is_ours "$pid" && printf '%s\n' "$pid"
	done
	return 0
}

# pid_alive PID: exists and is not a zombie (daemons are our children until
# up.sh exits, so a dead one lingers as a zombie).
pid_alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[[ -n $st && $st != Z ]]
}

# wait_gone SECONDS PID...: returns 0 once none of the PIDs is ours any more.
wait_gone() {
	local deadline=$(($(now_ms) + $1 * 1000)) pid alive
	shift
	while :; do
		alive=0
		for pid in "$@"; do is_ours "$pid" && alive=1 && break; done
		((alive)) || return 0
		(($(now_ms) >= deadline)) && return 1
		sleep 0.1
	done
}

# stop_pids SECONDS PID...: TERM all at once, KILL whatever is left after
# SECONDS (each Slurm daemon takes ~2 s to exit, so never one by one).
stop_pids() {
	local grace=$1 pid
	shift
	(($#)) || return 0
	for pid in "$@"; do is_ours "$pid" && kill -TERM "$pid" 2>/dev/null; done
	wait_gone "$grace" "$@" && return 0
	for pid in "$@"; do
		if is_ours "$pid"; then
			log "PID $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)) ignored TERM, sending KILL"
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	wait_gone 5 "$@"
}

# ---- mounts ---------------------------------------------------------------------
# mounts_under DIR prints mount points at or below DIR, deepest first.
mounts_under() {
	awk -v d="$1" '{ p = $5; gsub(/\\040/, " ", p); if (p == d || index(p, d "/") == 1) print length(p) "\t" p }' \
		/proc/self/mountinfo | sort -rn | cut -f2-
}

unmount_all() {
	local m
	while read -r m; do
		[[ -n $m ]] || continue
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
	done < <(mounts_under "$ROOTFS")
}

# ---- state ----------------------------------------------------------------------
# The state file records what a running cluster was started with, so down.sh
# tears down that cluster even when called with other knobs.
load_state() {
	[[ -f $STATE ]] || return 1
	# shellcheck disable=SC1090
	. "$STATE"
}

signature() {
	local scripts
	scripts=$(cat "$TC_DIR/lib.sh" "$TC_DIR/up.sh" | sha256sum | cut -c1-16)
	printf 'nodes=%s gpus=%s cpus=%s mem=%s port=%s partition=%s subnet=%s shared=%s base=%s hosthosts=%s nodebin=%s rootfs=%s scripts=%s' \
		"$NUM_NODES" "$GPUS" "$CPUS" "$MEM_MB" "$REST_PORT" "$PARTITION" "$SUBNET" "$SHARED" "$BASE" \
		"$HOST_HOSTS" "$NODE_BIN" "$(cache_key)" "$scripts"
}

# ---- host /etc/hosts (optional, SLURMBENCH_CLUSTER_HOST_HOSTS=1) ---------------
# Rewritten in place (not renamed) so a bind-mounted /etc/hosts keeps working.
host_hosts_remove() {
	grep -qxF "$HOSTS_BEGIN" /etc/hosts 2>/dev/null || return 0
	local kept
	kept=$(awk -v b="$HOSTS_BEGIN" -v e="$HOSTS_END" '$0 == b { skip = 1; next } $0 == e { skip = 0; next } !skip' /etc/hosts)
	printf '%s\n' "$kept" >/etc/hosts
}

host_hosts_add() {
	host_hosts_remove
	{
		printf '%s\n' "$HOSTS_BEGIN"
		hosts_lines
		printf '%s\n' "$HOSTS_END"
	} >>/etc/hosts
}

hosts_lines() {
	local i
	printf '%s\t%s\n' "$(ctl_addr)" "$CTL_NAME"
	for ((i = 1; i <= NUM_NODES; i++)); do printf '%s\t%s\n' "$(node_addr "$i")" "$(node_name "$i")"; done
}

# ---- teardown -------------------------------------------------------------------
# teardown stops whatever cluster lives under $BASE (the one in the state file,
# or leftovers of a crashed one) and checks that nothing is left. Safe to run
# when nothing is up. Returns 1 if something could not be removed.
teardown() {
	local t0 pids pid ns link left=0
	t0=$(now_ms)
	load_state || true

	# Cancel jobs while slurmctld still answers, and give them 2 s to end.
	if [[ -f $RUN/slurmctld.pid ]] && is_ours "$(<"$RUN/slurmctld.pid")"; then
		local jobs
		jobs=$(in_root_quick squeue -h -o %A | tr '\n' ' ')
		if [[ -n ${jobs// /} ]]; then
			log "cancelling jobs: $jobs"
			# shellcheck disable=SC2086
			in_root_quick scancel $jobs || true
			deadline=$(($(now_ms) + 2000))
			while (($(now_ms) < deadline)) && [[ -n $(in_root_quick squeue -h -o %A) ]]; do sleep 0.1; done
		fi
	fi
	# Whatever of the jobs is still running (slurmstepd, srun, tasks that ignore
	# TERM) is killed now: a slurmd waiting out KillWait for its steps would
	# otherwise ignore our TERM for the full 10 s.
	local daemons job_pids=() deadline
	daemons=" $(pidfile_pids | tr "\n" " ") "
	mapfile -t pids < <(rooted_pids)
	for pid in "${pids[@]}"; do [[ $daemons == *" $pid "* ]] || job_pids+=("$pid"); done
	if ((${#job_pids[@]})); then
		log "killing ${#job_pids[@]} job processes"
		kill -KILL "${job_pids[@]}" 2>/dev/null || true
		wait_gone 3 "${job_pids[@]}" || true
		# Let slurmctld see the jobs complete: a slurmd that reports a step end
		# to a slurmctld already gone waits MessageTimeout (10 s) before exiting.
		deadline=$(($(now_ms) + 3000))
		while (($(now_ms) < deadline)) && [[ -n $(in_root_quick squeue -h -o %A) ]]; do sleep 0.1; done
	fi

	mapfile -t pids < <(pidfile_pids)
	if ((${#pids[@]})); then
		log "stopping ${#pids[@]} daemons"
		stop_pids 10 "${pids[@]}"
	fi
	# Job tasks and slurmstepd's that outlived their slurmd.
	mapfile -t pids < <(rooted_pids)
	if ((${#pids[@]})); then
		log "stopping ${#pids[@]} leftover processes in the rootfs"
		stop_pids 3 "${pids[@]}"
	fi
	rm -f "$RUN"/*.pid

	unmount_all
	local m
	while read -r m; do
		[[ -n $m ]] && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"; }
	done < <(mounts_under "${STATE_MOUNT_DIR:-$MOUNT_DIR}")
	if mountpoint -q "$MNTNS" 2>/dev/null; then umount "$MNTNS" || umount -l "$MNTNS"; fi
	if mountpoint -q "$NSDIR" 2>/dev/null; then umount "$NSDIR" || umount -l "$NSDIR"; fi

	while read -r ns _; do
		[[ $ns == "$NETNS_PREFIX"* ]] && ip netns del "$ns" 2>/dev/null
	done < <(ip netns list 2>/dev/null)
	while read -r link; do
		ip link del "$link" 2>/dev/null
	done < <(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | grep -E "^($VETH_PREFIX|$BRIDGE\$)")

	[[ ${STATE_HOST_HOSTS:-0} == 1 || $HOST_HOSTS == 1 ]] && host_hosts_remove
	rm -f "$STATE"

	# Check that nothing is left.
	mapfile -t pids < <(rooted_pids)
	if ((${#pids[@]})); then log "still running in the rootfs: ${pids[*]}"; left=1; fi
	if [[ -n $(mounts_under "$ROOTFS") ]]; then log "still mounted: $(mounts_under "$ROOTFS" | tr '\n' ' ')"; left=1; fi
	if mountpoint -q "$NSDIR" 2>/dev/null; then log "still mounted: $NSDIR"; left=1; fi
	if [[ -n $(mounts_under "${STATE_MOUNT_DIR:-$MOUNT_DIR}") ]]; then log "still mounted: $(mounts_under "${STATE_MOUNT_DIR:-$MOUNT_DIR}" | tr '\n' ' ')"; left=1; fi
	if ip netns list 2>/dev/null | grep -q "^$NETNS_PREFIX"; then log "network namespaces left"; left=1; fi
	if ip -o link show 2>/dev/null | grep -qE ": (${VETH_PREFIX}[^:]*|${BRIDGE})[@:]"; then log "links left"; left=1; fi
	if ((left)); then
		log "teardown incomplete after $(since "$t0")"
		return 1
	fi
	log "down: nothing left ($(since "$t0"))"
}

# purge_rootfs deletes the unpacked tree, refusing while anything is mounted
# below it (a bind-mounted shared dir would otherwise be emptied).
purge_rootfs() {
	[[ -d $ROOTFS ]] || return 0
	[[ -z $(mounts_under "$ROOTFS") ]] || die "refusing to delete $ROOTFS: mounts left below it"
	rm -rf --one-file-system "$ROOTFS"
}

# ---- REST over bash /dev/tcp (no curl needed for readiness) ---------------------
# rest_get PATH TOKEN prints the response body of GET http://127.0.0.1:PORT/PATH.
rest_get() {
	# The token goes by environment, never argv: any user on the host can
	# read a process's argv (the e2e secrets test samples /proc for it).
	REST_GET_TOKEN=$2 timeout 10 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nX-SLURM-USER-TOKEN: %s\r\nAccept: application/json\r\n\r\n" "$1" "$REST_GET_TOKEN" >&3
		sed "1,/^\r\{0,1\}$/d" <&3' "$REST_PORT" "$1"
}

# rest_ping_up TOKEN: /ping answers "pinged": "UP". The HTTP status of /ping
# is 200 even for a bad token (pinged is "DOWN" then), so only the body counts.
rest_ping_up() {
	rest_get "/slurm/v0.0.41/ping" "$1" 2>/dev/null | grep -q '"pinged": *"UP"'
}

# mint_token LIFESPAN prints a JWT for the job user.
mint_token() {
	local out
	out=$(in_root scontrol token username="$JOB_USER" lifespan="$1" 2>&1) || {
		log "scontrol token failed: $out"
		return 1
	}
	out=${out#SLURM_JWT=}
	[[ $out =~ ^[A-Za-z0-9._-]+$ ]] || { log "unexpected token output: $out"; return 1; }
	printf '%s\n' "$out"
}
