#!/usr/bin/env bash
# Runs inside the trixie build chroot that rootfs.sh's build_tools_tarball
# makes with mmdebstrap: builds enroot and pyxis from the project's copies
# (third_party/enroot, third_party/pyxis, copied to /usr/local/src) and
# installs them under /usr/local, which is then packed into the tools
# tarball and unpacked over every node's rootfs.
#
# enroot is built against glibc (FORCE_GLIBC=1) because its git submodules
# (musl, makeself, linux-headers) are not vendored: Debian's makeself stands
# in for deps/makeself, and the kernel headers come from linux-libc-dev
# (third_party/enroot/ORIGIN.md). pyxis is built against Debian's
# libslurm-dev, the same Slurm 24.11 the nodes run.
set -euo pipefail
jobs=$(nproc)

cd /usr/local/src/enroot
mkdir -p deps/makeself deps/linux-headers deps/dist/linux/include
cp /usr/bin/makeself deps/makeself/makeself.sh
touch deps/linux-headers/.stamp
export FORCE_GLIBC=1
make -j"$jobs" FORCE_GLIBC=1
make install FORCE_GLIBC=1 prefix=/usr/local

cd /usr/local/src/pyxis
make -j"$jobs"
make install prefix=/usr/local

cd /
rm -rf /usr/local/src
/usr/local/bin/enroot version
