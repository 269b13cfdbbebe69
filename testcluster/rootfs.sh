# shellcheck shell=bash
# Recipe for the cluster's root filesystem: Debian trixie with Slurm 24.11.
# Sourced by lib.sh. The sha256 of this file (plus suite, mirror and
# architecture) is the cache key of the tarball, so any change here rebuilds
# the rootfs; changes elsewhere (slurm.conf, users, mounts) only restart the
# daemons, because that configuration is applied to the unpacked tree at
# every start.

ROOTFS_SUITE=trixie

# Slurm itself, plus what the slurmbench driver (a static Go binary) and the
# bash stand-ins (enroot, model servers) use inside jobs.  munge comes in as a
# hard dependency of the Slurm packages but is never started (auth/slurm).
ROOTFS_PACKAGES=(
	slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin
	systemd-standalone-sysusers
	bash coreutils procps psmisc util-linux findutils grep sed hostname
	tar gzip zstd
	netcat-openbsd iproute2
	# What the enroot stand-in (testdata/enroot-standin) and the tests'
	# helpers call, and mount/umount, which up.sh uses to pivot the nodes'
	# root.
	curl jq squashfs-tools mawk mount
	# Slurm's own OCI containers (srun --container, oci.conf): crun runs the
	# bundles rootless; skopeo copies an image from the registry into an
	# OCI layout and umoci unpacks it into a bundle (the Containers Guide's
	# recipe, slurm.schedmd.com/containers.html#bundle). All from trixie:
	# crun 1.21, skopeo 1.18.0, umoci 0.4.7 (apt-cache policy, 2026-12-06).
	crun skopeo umoci
	# The test registry (up.sh runs it on the cluster's bridge) and the
	# static shell of the mock-engine image (testcluster/mock-image.sh).
	docker-registry busybox-static
)

# build_rootfs_tarball OUT.tar.zst DEBCACHE MIRROR
# Runs mmdebstrap as root. Downloaded .debs are synced in and out of DEBCACHE
# so a rebuild after a recipe change downloads only what changed. Docs, man
# pages and locales are deleted in a hook: excluding them with
# --dpkgopt=path-exclude made the build twice as slow.
build_rootfs_tarball() {
	local out=$1 debcache=$2 mirror=$3
	local include
	include=$(IFS=,; printf '%s' "${ROOTFS_PACKAGES[*]}")
	mkdir -p "$debcache"
	mmdebstrap \
		--variant=essential --mode=root --format=tar \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$include" \
		--skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $debcache /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $debcache" \
		--customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/info/* "$1"/usr/share/locale/*' \
		"$ROOTFS_SUITE" "$out" "$mirror"
}
