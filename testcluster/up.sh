#!/usr/bin/env bash
# Start the slurmbench test cluster: Slurm 24.11 (Debian trixie) in a chroot,
# slurmctld + N slurmd nodes each in its own network and UTS namespace, fake
# GPUs via GRES, slurmrestd with JWT on 127.0.0.1. Run as root.
#
# stdout: the export lines of the env file (nothing else); progress on stderr.
# Idempotent: with the same knobs and a healthy cluster it only re-prints the
# env; with other knobs it tears the old cluster down first. See README.md.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || die "run as root"
validate_knobs
case $SHARED/ in "$ROOTFS"/*) die "the shared dir must not live inside $ROOTFS" ;; esac

T0=$(now_ms)
mkdir -p "$BASE" "$RUN" "$LOG" "$CACHE"
exec 9>"$BASE/.lock"
flock -w 300 9 || die "another up.sh/down.sh holds $BASE/.lock"

ensure_host_tools ip:iproute2 zstd:zstd nsenter:util-linux flock:util-linux setcap:libcap2-bin

SIG=$(signature)
KEY=$(cache_key)

# shq quotes a value for the env file only when it needs it, so the file
# stays readable by simple KEY=VALUE parsers too.
shq() { if [[ $1 =~ ^[A-Za-z0-9_./:=,@+-]+$ ]]; then printf '%s' "$1"; else printf '%q' "$1"; fi; }

# write_slurm_bin puts Slurm's client commands for the host in $BASE/bin:
# each wrapper runs the rootfs's command chrooted, as the job user (like a
# login node's user; root's requests are refused here), against this
# cluster's slurmctld, with the caller's environment (sbatch hands it to
# the job). slurmbench's cli transport runs them (slurm.bin_dir).
write_slurm_bin() {
	local dir=$BASE/bin uid gid cmd chroot_bin
	uid=$(awk -F: -v u="$JOB_USER" '$1 == u { print $3 }' "$ROOTFS/etc/passwd")
	gid=$(awk -F: -v u="$JOB_USER" '$1 == u { print $4 }' "$ROOTFS/etc/passwd")
	chroot_bin=$(command -v chroot)
	[[ -n $uid && -n $gid && -n $chroot_bin ]] || die "cannot write $dir: no $JOB_USER in the rootfs or no chroot"
	mkdir -p "$dir"
	for cmd in sbatch squeue scontrol sacct scancel sinfo; do
		printf '#!/bin/sh\n# Written by testcluster/up.sh: the cluster'"'"'s %s as %s.\nexec %s --userspec=%s:%s %s /usr/bin/%s "$@"\n' \
			"$cmd" "$JOB_USER" "$chroot_bin" "$uid" "$gid" "$ROOTFS" "$cmd" >"$dir/.$cmd.tmp"
		chmod 0755 "$dir/.$cmd.tmp"
		mv -f "$dir/.$cmd.tmp" "$dir/$cmd"
	done
}

write_env() { # TOKEN
	local tmp
	write_slurm_bin
	tmp=$(mktemp "$(dirname "$ENV_FILE")/.env.XXXXXX")
	{
		printf 'export SLURM_REST_URL=%s\n' "$(shq "http://127.0.0.1:$REST_PORT")"
		printf 'export SLURM_JWT=%s\n' "$(shq "$1")"
		printf 'export SLURM_USER=%s\n' "$(shq "$JOB_USER")"
		printf 'export SLURM_PARTITION=%s\n' "$(shq "$PARTITION")"
		printf 'export SLURMBENCH_SHARED_DIR=%s\n' "$(shq "$SHARED")"
		printf 'export SLURMBENCH_CLUSTER_NODES=%s\n' "$(shq "$(node_names_csv)")"
		printf 'export SLURMBENCH_CLUSTER_NODE_ADDRS=%s\n' "$(shq "$(node_addrs_csv)")"
		printf 'export SLURMBENCH_CLUSTER_REGISTRY=%s\n' "$(shq "$(registry_addr)")"
		printf 'export SLURMBENCH_CLUSTER_MOUNT_DIR=%s\n' "$(shq "$MOUNT_DIR")"
		printf 'export SLURMBENCH_CLUSTER_SLURM_BIN=%s\n' "$(shq "$BASE/bin")"
	} >"$tmp"
	chmod 0600 "$tmp"
	sync "$tmp" 2>/dev/null || true
	mv -f "$tmp" "$ENV_FILE"
	cat "$ENV_FILE"
}

daemons_alive() {
	local f
	for f in "$RUN/slurmctld.pid" "$RUN/slurmrestd.pid" "$RUN/registry.pid"; do
		[[ -f $f ]] && is_ours "$(<"$f")" || return 1
	done
	for ((i = 1; i <= NUM_NODES; i++)); do
		f=$RUN/slurmd-$(node_name "$i").pid
		[[ -f $f ]] && is_ours "$(<"$f")" || return 1
	done
}

# ---- fast path: the same cluster is already up ------------------------------------
if load_state && [[ ${STATE_SIGNATURE:-} == "$SIG" ]] && daemons_alive; then
	TOKEN=
	if [[ -f ${STATE_ENV_FILE:-} ]]; then
		TOKEN=$(sed -n 's/^export SLURM_JWT=//p' "$STATE_ENV_FILE")
	fi
	if [[ -z $TOKEN ]] || ! rest_ping_up "$TOKEN"; then
		TOKEN=$(mint_token "$TOKEN_LIFESPAN" || true)
	fi
	if [[ -n $TOKEN ]] && rest_ping_up "$TOKEN"; then
		mkdir -p "$(dirname "$ENV_FILE")"
		write_env "$TOKEN"
		sed -i "s|^STATE_ENV_FILE=.*|STATE_ENV_FILE=$(printf %q "$ENV_FILE")|" "$STATE"
		log "cluster already up ($(since "$T0")); env in $ENV_FILE"
		exit 0
	fi
	log "cluster state file matches but the cluster is unhealthy: restarting"
fi
if [[ -f $STATE ]] || [[ -n $(pidfile_pids) ]] || ip link show "$BRIDGE" >/dev/null 2>&1 ||
	[[ -n $(mounts_under "$ROOTFS") ]] || ip netns list 2>/dev/null | grep -q "^$NETNS_PREFIX"; then
	log "tearing down the previous cluster"
	teardown || die "could not tear down the previous cluster (see above)"
fi

# ---- rootfs --------------------------------------------------------------------------
T=$(now_ms)
TARBALL=$CACHE/rootfs-$ROOTFS_SUITE-$KEY.tar.zst
if [[ -f $ROOTFS/$MARKER && $(<"$ROOTFS/$MARKER") == "$KEY" ]]; then
	log "reusing unpacked rootfs $ROOTFS"
else
	purge_rootfs
	if [[ ! -f $TARBALL ]]; then
		ensure_host_tools mmdebstrap:mmdebstrap /usr/share/keyrings/debian-archive-keyring.gpg:debian-archive-keyring
		log "building the $ROOTFS_SUITE rootfs with mmdebstrap (cache key $KEY)"
		TB=$(now_ms)
		tmp=$CACHE/.build-$$.tar.zst
		trap 'rm -f "$tmp"' EXIT
		build_rootfs_tarball "$tmp" "$CACHE/debs" "$MIRROR" >&2 || die "mmdebstrap failed"
		mv -f "$tmp" "$TARBALL"
		trap - EXIT
		# Older tarballs belong to older recipes, or to another checkout
		# (a worktree on another branch) that shares this cache: those
		# used in the last two days stay, so switching back is an unpack.
		find "$CACHE" -maxdepth 1 -name 'rootfs-*.tar.zst' ! -name "${TARBALL##*/}" -mtime +1 -delete
		find "$CACHE" -maxdepth 1 -name 'tools-*.tar.zst' -delete
		log "built $TARBALL ($(du -h "$TARBALL" | cut -f1)) in $(since "$TB")"
	fi
	log "unpacking $TARBALL"
	touch "$TARBALL" # in use: the cache keeps it (above)
	rm -rf --one-file-system "$ROOTFS.tmp"
	mkdir -p "$ROOTFS.tmp"
	tar --zstd -xpf "$TARBALL" --numeric-owner -C "$ROOTFS.tmp"
	printf '%s\n' "$KEY" >"$ROOTFS.tmp/$MARKER"
	mv "$ROOTFS.tmp" "$ROOTFS"
fi
log "rootfs ready ($(since "$T"))"

# ---- configuration inside the rootfs (applied at every start) --------------------
T=$(now_ms)
R=$ROOTFS

uid_of() { awk -F: -v u="$1" '$1 == u { print $3 }' "$R/etc/passwd"; }
gid_of() { awk -F: -v g="$1" '$1 == g { print $3 }' "$R/etc/group"; }

ensure_account() { # NAME UID HOME SHELL
	local name=$1 uid=$2 home=$3 shell=$4
	grep -q "^$name:" "$R/etc/group" || printf '%s:x:%s:\n' "$name" "$uid" >>"$R/etc/group"
	grep -q "^$name:" "$R/etc/passwd" ||
		printf '%s:x:%s:%s::%s:%s\n' "$name" "$uid" "$(gid_of "$name")" "$home" "$shell" >>"$R/etc/passwd"
	grep -q "^$name:" "$R/etc/shadow" || printf '%s:*:20000:0:99999:7:::\n' "$name" >>"$R/etc/shadow"
}

SLURM_UID=$(uid_of slurm)
[[ -n $SLURM_UID ]] || die "the rootfs has no slurm user (did the Slurm packages install?)"
SLURM_GID=$(gid_of slurm)
[[ -z $(awk -F: -v u="$JOB_UID" '$3 == u && $1 != "'"$JOB_USER"'"' "$R/etc/passwd") ]] ||
	die "uid $JOB_UID is taken in the rootfs"
ensure_account "$JOB_USER" "$JOB_UID" "/home/$JOB_USER" /bin/bash
ensure_account "$REST_USER" 64031 /nonexistent /usr/sbin/nologin
install -d -o "$JOB_UID" -g "$JOB_UID" -m 0755 "$R/home/$JOB_USER"

{
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n'
	hosts_lines
} >"$R/etc/hosts"
# No DNS: names come from /etc/hosts only (a resolver timeout would stall Slurm).
printf '# slurmbench test cluster: no DNS, see /etc/hosts\n' >"$R/etc/resolv.conf"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$R/etc/nsswitch.conf"

SC=$R/etc/slurm
mkdir -p "$SC"
if [[ ! -s $SC/slurm.key ]]; then head -c 1024 /dev/urandom >"$SC/slurm.key"; fi
if [[ ! -s $SC/jwt_hs256.key ]]; then head -c 32 /dev/urandom >"$SC/jwt_hs256.key"; fi
chown "$SLURM_UID:$SLURM_GID" "$SC/slurm.key" "$SC/jwt_hs256.key"
chmod 0600 "$SC/slurm.key" "$SC/jwt_hs256.key"

GPU_LAST=$((GPUS - 1))
NODE_RANGE="${NODE_PREFIX}[1-$NUM_NODES]"
((NUM_NODES == 1)) && NODE_RANGE=$(node_name 1)
{
	cat <<EOF
# Generated by testcluster/up.sh; rewritten at every start.
ClusterName=slurmbench
SlurmctldHost=$CTL_NAME($(ctl_addr))
SlurmUser=slurm
SlurmctldPort=$CTL_PORT
SlurmdPort=6818
# auth/slurm instead of munge; JWT for slurmrestd and scontrol token.
AuthType=auth/slurm
CredType=cred/slurm
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=/etc/slurm/jwt_hs256.key
# Daemons bind their own address only (slurmctld needs its own flag).
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation=/var/spool/slurmctld
# slurmd does not create the %n directory: up.sh does.
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
# slurmctld logs to its stderr (-D), which up.sh sends to $LOG/slurmctld.log.
# slurmd needs a log file, or slurmstepd's messages are lost.
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups and no systemd (cgroup.conf also says CgroupPlugin=disabled).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
# No slurmdbd: finished jobs stay visible for MinJobAge seconds only.
MinJobAge=3600
SchedulerType=sched/backfill
# HetJobs are started by the backfill scheduler only: run it every second.
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
# Advertise CPUs/RealMemory from this file, not from the (smaller) host.
SlurmdParameters=config_overrides
ReturnToService=2
# Cancelled jobs get SIGKILL 5 s after SIGTERM (default 30 s), to keep tests short.
KillWait=5
MailProg=/bin/true
InactiveLimit=0
EOF
	for ((i = 1; i <= NUM_NODES; i++)); do
		printf 'NodeName=%s NodeAddr=%s NodeHostname=%s CPUs=%s RealMemory=%s Gres=gpu:%s State=UNKNOWN\n' \
			"$(node_name "$i")" "$(node_addr "$i")" "$(node_name "$i")" "$CPUS" "$MEM_MB" "$GPUS"
	done
	printf 'PartitionName=%s Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n' "$PARTITION"
} >"$SC/slurm.conf"
{
	printf 'AutoDetect=off\n'
	if ((GPUS == 1)); then
		printf 'NodeName=%s Name=gpu File=/dev/fakegpu/nvidia0\n' "$NODE_RANGE"
	else
		printf 'NodeName=%s Name=gpu File=/dev/fakegpu/nvidia[0-%d]\n' "$NODE_RANGE" "$GPU_LAST"
	fi
} >"$SC/gres.conf"
# slurmd 24.11 initialises a cgroup plugin even with proctrack/linuxproc and
# dies without /sys/fs/cgroup unless told not to.
printf 'CgroupPlugin=disabled\n' >"$SC/cgroup.conf"
# Slurm's OCI containers (srun --container=BUNDLE): slurmstepd runs crun as
# the job's user, after Slurm's Containers Guide, "oci.conf example for crun
# using run" (slurm.schedmd.com/containers.html#crun_run; doc/html/
# containers.shtml@01cec7fa), with two changes for these nodes: there are no
# cgroups (CgroupPlugin=disabled), so crun manages none, and its state lives
# under /run/user/UID/crun, which up.sh creates (there is no systemd-logind).
# Container ids carry the node name (%n), so the nodes can share /run/user.
rm -f "$SC/plugstack.conf"
crun='crun --rootless=true --cgroup-manager=disabled --root=/run/user/%U/crun'
cat >"$SC/oci.conf" <<EOF
# Written by testcluster/up.sh at every start.
EnvExclude="^(SLURM_CONF|SLURM_CONF_SERVER)="
RunTimeEnvExclude="^(SLURM_CONF|SLURM_CONF_SERVER)="
RunTimeQuery="$crun state %n.%u.%j.%s.%t"
RunTimeKill="$crun kill -a %n.%u.%j.%s.%t"
RunTimeDelete="$crun delete --force %n.%u.%j.%s.%t"
RunTimeRun="$crun run --bundle %b %n.%u.%j.%s.%t"
EOF
chmod 0644 "$SC/slurm.conf" "$SC/gres.conf" "$SC/cgroup.conf" "$SC/oci.conf"
# A fresh slurmctld numbers jobs from 1 again, so a container id of an
# earlier start (node.user.job.step.task) would collide with a new job's
# ("container … already exists"): crun's state starts empty with the cluster.
rm -rf "$R/run/user"
install -d -m 0755 "$R/run/user"
install -d -o "$JOB_UID" -g "$JOB_UID" -m 0700 "$R/run/user/$JOB_UID"
mkdir -p "$R/.oldroot"

# The registry (Debian's docker-registry, Docker registry v2) on the
# cluster's bridge address, plain HTTP; its storage stays in the unpacked
# rootfs, so a warm start finds the pushed images again.
mkdir -p "$R/etc/docker/registry" "$R/var/lib/docker-registry"
cat >"$R/etc/docker/registry/config.yml" <<EOF
# Written by testcluster/up.sh at every start.
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: /var/lib/docker-registry
  delete:
    enabled: true
http:
  addr: $(registry_addr)
EOF
rm -rf "$R/var/lib/slurmbench-node"

# Fake GPUs: char devices 1:3 (like /dev/null), one per GRES index.
rm -rf "$R/dev/fakegpu"
mkdir -p "$R/dev/fakegpu"
for ((g = 0; g < GPUS; g++)); do mknod -m 0666 "$R/dev/fakegpu/nvidia$g" c 1 3; done
# Basic device nodes (mmdebstrap's tarball normally has them already).
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r n maj min <<<"$d"
	[[ -c $R/dev/$n ]] || { rm -f "$R/dev/$n"; mknod -m 0666 "$R/dev/$n" c "$maj" "$min"; }
done
mkdir -p "$R/dev/pts" "$R/dev/shm" "$R/proc" "$R/sys" "$R/tmp"
ln -sfn pts/ptmx "$R/dev/ptmx"
chmod 1777 "$R/tmp"

# Fresh controller state and spool dirs at every start (job ids restart at 1).
rm -rf "$R/var/spool/slurmctld" "$R/var/spool/slurmd"
install -d -o "$SLURM_UID" -g "$SLURM_GID" -m 0755 "$R/var/spool/slurmctld"
for ((i = 1; i <= NUM_NODES; i++)); do install -d -m 0755 "$R/var/spool/slurmd/$(node_name "$i")"; done
rm -rf "$R/run/slurm" "$R"/run/slurm*.pid
install -d -m 0755 "$R/run/slurm"

# Logs: previous run's logs move to log/prev; the dir is bind-mounted at the
# same path so slurmstepd's SlurmdLogFile lands on the host too.
mkdir -p "$LOG/prev"
find "$LOG" -maxdepth 1 -type f -exec mv -f {} "$LOG/prev/" \;
chown "$SLURM_UID:$SLURM_GID" "$LOG"
chmod 0755 "$LOG"

# The shared filesystem: same absolute path on the host and in the nodes.
mkdir -p "$SHARED"
chown "$JOB_UID:$JOB_UID" "$SHARED"
chmod 0775 "$SHARED"
log "configured rootfs ($(since "$T"))"

# ---- mounts ------------------------------------------------------------------------
T=$(now_ms)
mount -t proc proc "$R/proc"
# hwloc (slurmd's topology) needs sysfs; read-only is enough.
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
# crun looks at /sys/fs/cgroup's filesystem type when it starts, even with
# --cgroup-manager=disabled ("invalid file system type on /sys/fs/cgroup"
# on the bare sysfs directory): a read-only cgroup2 there satisfies it.
mount -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$R/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$R/dev/shm"
mkdir -p "$R$SHARED" "$R$LOG"
# $SHARED/mnt is a shared mount: what the host mounts below it later (a test's
# small tmpfs as a full disk) shows at the same path on every node too.
mkdir -p "$MOUNT_DIR"
chown "$JOB_UID:$JOB_UID" "$MOUNT_DIR"
mount --bind "$MOUNT_DIR" "$MOUNT_DIR"
mount --make-shared "$MOUNT_DIR"
mount --rbind "$SHARED" "$R$SHARED"
# Jobs execute binaries from the shared dir: make sure it is not noexec.
if findmnt -no OPTIONS --target "$R$SHARED" | tr ',' '\n' | grep -qx noexec; then
	mount -o remount,bind,exec "$R$SHARED"
fi
mount --bind "$LOG" "$R$LOG"
if [[ -n $NODE_BIN ]]; then
	mount --bind "$NODE_BIN" "$R/usr/local/bin"
	mount -o remount,bind,ro "$R/usr/local/bin"
fi
# The nodes' mount namespace: the rootfs (with the mounts above) is its real
# root (pivot_root), not a chroot, because the kernel refuses user
# namespaces to chrooted processes and crun needs them (rootless). Kept alive by a
# bind mount of its nsfs file; each slurmd joins it with nsenter (start_daemon).
mkdir -p "$NSDIR"
mount --bind "$NSDIR" "$NSDIR"
mount --make-private "$NSDIR"
: >"$MNTNS"
unshare --mount="$MNTNS" --propagation slave /bin/sh -c \
	'mount --rbind "$0" "$0" && cd "$0" && pivot_root . .oldroot && exec umount -l /.oldroot' "$R" ||
	die "could not make the nodes' mount namespace"
log "mounted ($(since "$T"))"

# ---- network -------------------------------------------------------------------------
T=$(now_ms)
if ip -o -4 addr show | awk '{ print $4 }' | grep -q "^${SUBNET//./\\.}\."; then
	die "the host already has an address in $SUBNET.0/24; choose another SLURMBENCH_CLUSTER_SUBNET"
fi
ip link add "$BRIDGE" type bridge
ip addr add "$(ctl_addr)/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
for ((i = 1; i <= NUM_NODES; i++)); do
	n=$(node_name "$i") ns=$NETNS_PREFIX$(node_name "$i")
	ip netns add "$ns"
	ip link add "$VETH_PREFIX$n" type veth peer name eth0 netns "$ns"
	ip link set "$VETH_PREFIX$n" master "$BRIDGE" up
	ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	# No default route on purpose: nodes reach the /24 (the host is .1) and nothing else.
done
log "network ready ($(since "$T"))"

# ---- daemons -------------------------------------------------------------------------
# start_daemon NAME NETNS HOSTNAME ENV/ARGV...: detached (setsid), optionally in a
# node's netns, with its own hostname (UTS ns), chrooted, clean environment.
# Every step execs, so $! is the daemon's own PID.
start_daemon() {
	local name=$1 ns=$2 host=$3 argv=(setsid) logext=log
	shift 3
	# slurmd writes its own .log (SlurmdLogFile); its stderr copy goes aside.
	[[ $name == slurmd-* ]] && logext=stderr
	if [[ -n $ns ]]; then
		# A node: in the nodes' mount namespace (root = the rootfs, no
		# chroot) and its own network, hostname and mount namespace.
		argv+=(nsenter --mount="$MNTNS" --net="/run/netns/$ns" unshare --uts --mount --propagation slave /bin/sh -c '
			echo "$0" >/proc/sys/kernel/hostname &&
			exec "$@"' "$host")
		argv+=(/usr/bin/env -i PATH="$CHROOT_PATH" HOME=/root LANG=C.UTF-8 "$@")
	else
		[[ -n $host ]] && argv+=(unshare --uts /bin/sh -c 'echo "$0" >/proc/sys/kernel/hostname && exec "$@"' "$host")
		argv+=(chroot "$ROOTFS" /usr/bin/env -i PATH="$CHROOT_PATH" HOME=/root LANG=C.UTF-8 "$@")
	fi
	# 9>&-: the daemons must not inherit (and so hold forever) the lock.
	"${argv[@]}" </dev/null >>"$LOG/$name.$logext" 2>&1 9>&- &
	printf '%s\n' "$!" >"$RUN/$name.pid"
}

fail_with_logs() {
	local f
	for f in "$LOG"/*.stderr "$LOG"/*.log; do
		[[ -s $f ]] || continue
		log "---- tail $f"
		tail -n 15 "$f" >&2
	done
	die "$1 (cluster left as is for debugging; run testcluster/down.sh to clean up)"
}

# wait_for SECONDS WHAT COMMAND...: poll every 0.1 s; fail with logs on timeout
# or when a daemon died.
wait_for() {
	local secs=$1 what=$2 deadline
	shift 2
	deadline=$(($(now_ms) + secs * 1000))
	until "$@"; do
		for f in "$RUN"/*.pid; do
			pid_alive "$(<"$f")" ||
				fail_with_logs "$(basename "$f" .pid) exited while waiting for $what"
		done
		(($(now_ms) < deadline)) || fail_with_logs "timed out after ${secs}s waiting for $what"
		sleep 0.1
	done
}

T=$(now_ms)
start_daemon slurmctld "" "$CTL_NAME" slurmctld -D -c
ctld_up() { in_root scontrol ping 2>/dev/null | grep -q ' is UP'; }
wait_for 30 "slurmctld" ctld_up
log "slurmctld UP ($(since "$T"))"

# One slurmd at a time: the nodes share the rootfs's /run/slurm, where each
# slurmd replaces sack.socket (auth/slurm's local socket) as it starts; two
# starting at once could both find the path taken and one die with
# "init_sack_conmgr: ... Address already in use". The next starts once the
# last logged that it is up (past that bind): about 0.1 s a node.
for ((i = 1; i <= NUM_NODES; i++)); do
	n=$(node_name "$i")
	start_daemon "slurmd-$n" "$NETNS_PREFIX$n" "$n" slurmd -D -N "$n"
	slurmd_started() { grep -q 'slurmd started on' "$LOG/slurmd-$n.stderr" 2>/dev/null; }
	wait_for 30 "slurmd-$n to start" slurmd_started
done
# slurmrestd refuses to run as root or SlurmUser: it binds as root, then drops to
# its own user. SLURM_JWT=daemon makes it accept per-request tokens, and
# -s openapi/slurmctld keeps it from loading the slurmdbd plugin (no slurmdbd).
start_daemon slurmrestd "" "" SLURM_JWT=daemon \
	slurmrestd -a rest_auth/jwt -s openapi/slurmctld -u "$REST_USER" -g "$REST_USER" "127.0.0.1:$REST_PORT"

start_daemon registry "" "" docker-registry serve /etc/docker/registry/config.yml

nodes_idle() {
	local idle
	idle=$(in_root sinfo -h -N -p "$PARTITION" -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)
	((idle == NUM_NODES))
}
wait_for 60 "$NUM_NODES idle nodes" nodes_idle
log "$NUM_NODES nodes idle ($(since "$T"))"

TOKEN=$(mint_token "$TOKEN_LIFESPAN") || fail_with_logs "could not mint a token"
rest_up() { rest_ping_up "$TOKEN"; }
wait_for 30 "slurmrestd /ping UP" rest_up
log "slurmrestd UP on 127.0.0.1:$REST_PORT ($(since "$T"))"
wait_for 30 "the registry on $(registry_addr)" registry_up
log "registry UP on $(registry_addr) ($(since "$T"))"

((HOST_HOSTS == 1)) && host_hosts_add

{
	printf 'STATE_SIGNATURE=%q\n' "$SIG"
	printf 'STATE_ENV_FILE=%q\n' "$ENV_FILE"
	printf 'STATE_HOST_HOSTS=%q\n' "$HOST_HOSTS"
	printf 'STATE_NUM_NODES=%q\n' "$NUM_NODES"
	printf 'STATE_MOUNT_DIR=%q\n' "$MOUNT_DIR"
} >"$STATE"
mkdir -p "$(dirname "$ENV_FILE")"
write_env "$TOKEN"
log "cluster up in $(since "$T0"): $NUM_NODES nodes x $GPUS GPUs, env in $ENV_FILE, logs in $LOG"
