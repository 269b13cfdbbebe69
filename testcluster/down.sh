#!/usr/bin/env bash
# Stop the slurmbench test cluster: cancel jobs, stop our daemons (TERM, KILL
# after 10 s), kill what is left chrooted in our rootfs, unmount, delete the
# network namespaces, veths and bridge, and check that nothing is left.
# Safe to run when nothing is up.
#   --purge  also delete the unpacked rootfs (the cached tarball is kept).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PURGE=0
for a in "$@"; do
	case $a in
	--purge) PURGE=1 ;;
	-h | --help) sed -n '2,7p' "$0"; exit 0 ;;
	*) die "unknown argument $a (usage: down.sh [--purge])" ;;
	esac
done
[[ $(id -u) == 0 ]] || die "run as root"

if [[ ! -d $BASE ]]; then
	log "nothing under $BASE"
	exit 0
fi
exec 9>"$BASE/.lock"
flock -w 300 9 || die "another up.sh/down.sh holds $BASE/.lock"

rc=0
teardown || rc=1
if ((PURGE)); then
	((rc == 0)) || die "not purging: teardown was incomplete"
	T=$(now_ms)
	purge_rootfs
	rm -rf --one-file-system "$ROOTFS.tmp"
	log "purged $ROOTFS ($(since "$T")); cache kept in $CACHE"
fi
exit "$rc"
