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
	# enroot's runtime dependencies (third_party/enroot/pkg/deb/control:
	# Depends and Recommends, plus the commands its scripts check for) and
	# mount/umount, which up.sh uses to pivot the nodes' root.
	curl jq parallel squashfs-tools pigz mawk passwd bsdextrautils mount
	fuse-overlayfs squashfuse
	# The test registry (up.sh runs it on the cluster's bridge) and the
	# static shell of the mock-engine image (testcluster/mock-image.sh).
	docker-registry busybox-static
)

# The build chroot for enroot and pyxis (build_tools_tarball): a compiler,
# Debian's makeself (enroot's deps/makeself submodule is not vendored) and
# libslurm-dev for pyxis's slurm/spank.h.
TOOLS_BUILD_PACKAGES=(gcc make libc6-dev linux-libc-dev libslurm-dev makeself)

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

# build_tools_tarball OUT.tar.zst DEBCACHE MIRROR THIRD_PARTY
# Builds enroot and pyxis from the project's copies (THIRD_PARTY/enroot,
# THIRD_PARTY/pyxis) in a throw-away trixie chroot with the build
# dependencies (testcluster/build-tools.sh) and packs what they installed
# under /usr/local (tar-out packs it as local/...). up.sh unpacks that over
# the rootfs's /usr, so the nodes get the tools without the compiler.
build_tools_tarball() {
	local out=$1 debcache=$2 mirror=$3 src=$4
	local include tar=${1%.zst}
	include=$(IFS=,; printf '%s' "${TOOLS_BUILD_PACKAGES[*]}")
	mkdir -p "$debcache"
	rm -f "$tar"
	mmdebstrap \
		--variant=essential --mode=root --format=null \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$include" \
		--skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $debcache /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $debcache" \
		--customize-hook="copy-in $src/enroot $src/pyxis $TC_DIR/build-tools.sh /usr/local/src" \
		--customize-hook='chroot "$1" /bin/bash /usr/local/src/build-tools.sh' \
		--customize-hook="tar-out /usr/local $tar" \
		"$ROOTFS_SUITE" /dev/null "$mirror" &&
		zstd -q -f --rm -T0 "$tar" -o "$out"
}
