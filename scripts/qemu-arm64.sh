#!/usr/bin/env bash
# qemu-arm64.sh: let this x86_64 machine run linux/arm64 binaries through
# qemu-user-static and binfmt_misc, so the test cluster's x86_64 nodes run
# an aarch64 slurmbench driver the way GB300's compute nodes would
# (internal/e2e TestArm64DriverUnderQemu). Needs root; idempotent.
#   scripts/qemu-arm64.sh          install qemu-user-static, register aarch64
#   scripts/qemu-arm64.sh --check  exit 0 when aarch64 binaries run here
# The registration is the kernel's (fix-binary flag, so it works inside the
# test nodes' chroots) and lasts until reboot.
set -euo pipefail
reg=/proc/sys/fs/binfmt_misc/qemu-aarch64
registered() { [[ -r $reg ]] && [[ $(head -1 "$reg") == enabled ]]; }

if [[ ${1:-} == --check ]]; then
	[[ $(uname -m) == aarch64 ]] || registered
	exit
fi
[[ $(uname -m) == aarch64 ]] && exit 0
registered && exit 0
if [[ $(id -u) != 0 ]]; then
	echo "qemu-arm64: not root: cannot register aarch64 emulation" >&2
	exit 1
fi
if ! command -v qemu-aarch64-static >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static >/dev/null ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static >/dev/null; }
fi
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
registered || grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register
registered
echo "qemu-arm64: aarch64 binaries run here through $(sed -n 's/^interpreter //p' "$reg")" >&2
