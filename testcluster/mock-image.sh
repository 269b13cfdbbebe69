#!/usr/bin/env bash
# mock-image.sh BINARY [REPOSITORY:TAG]: build the mock-engine image and push
# it to the test cluster's registry. Prints REGISTRY/REPOSITORY:TAG@DIGEST.
#
# The image is one uncompressed layer holding BINARY (the static slurmbench,
# whose mock engine the demo recipe serves) as /usr/local/bin/slurmbench,
# scripts named trtllm-serve, trtllm-llmapi-launch, vllm and vllm-router
# that run its stand-ins for those tools (`slurmbench mock-tool`), and
# the rootfs's static busybox as /bin/sh (enroot starts every container
# through /bin/sh; the OCI path runs the step's command directly), and a
# /bin/bash that runs busybox's ash: a recipe's setup_script runs as
# `bash /configs/<name>` (srtctl's worker preamble), so the image must have
# one. It is not bash: a script that needs bash's own features (arrays,
# [[ ]], /dev/tcp) fails in it. Nothing in it depends on the time or the machine: the
# layer tar has sorted names, mtime 0, uid/gid 0 and fixed modes, and the
# config has no creation date, so the same BINARY and busybox give the same
# digest (an uncompressed layer also keeps the compressor out of it). skopeo
# and umoci accept uncompressed layers, as enroot does (its gzip -d -f -c
# passes them through).
#
# Needs a running cluster (up.sh); blobs already in the registry are not
# sent again. Run as root.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || die "run as root"
BIN=${1:?usage: mock-image.sh BINARY [REPOSITORY:TAG]}
REPO_TAG=${2:-slurmbench/mock-engine:demo}
REPO=${REPO_TAG%:*} TAG=${REPO_TAG##*:}
[[ -f $BIN && -x $BIN ]] || die "$BIN is not an executable file"
[[ $REPO =~ ^[a-z0-9]+([._/-][a-z0-9]+)*$ && $TAG =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]] || die "bad image name $REPO_TAG"
registry_up || die "the registry on $(registry_addr) does not answer (is the cluster up?)"

case $(od -An -t x1 -j 18 -N 2 "$BIN" | tr -d ' ') in
3e00) ARCH=amd64 ;;
b700) ARCH=arm64 ;;
*) die "$BIN is not an x86-64 or aarch64 ELF" ;;
esac
BUSYBOX=$ROOTFS/usr/bin/busybox
[[ -x $BUSYBOX ]] || die "no $BUSYBOX in the rootfs (busybox-static)"
[[ $ARCH == "$(dpkg --print-architecture)" ]] ||
	die "$BIN is $ARCH but the rootfs's busybox is $(dpkg --print-architecture)"

# The work dir lives in the rootfs so that the rootfs's curl (chroot, host
# network) can send the files: the host needs no curl.
WORK_IN=/var/tmp/mock-image.$$
WORK=$ROOTFS$WORK_IN
trap 'rm -rf "$WORK"' EXIT
rm -rf "$WORK"
mkdir -p "$WORK/root"/{bin,dev,etc,proc,sys,tmp,run,usr/local/bin}
cp "$BIN" "$WORK/root/usr/local/bin/slurmbench"
cp "$BUSYBOX" "$WORK/root/bin/busybox"
ln -s busybox "$WORK/root/bin/sh"
# busybox has no bash applet: called as bash it would refuse to run.
printf '#!/bin/sh\nexec /bin/busybox ash "$@"\n' >"$WORK/root/bin/bash"
chmod 0755 "$WORK/root/bin/bash"
chmod 0755 "$WORK/root/bin/busybox"
# MOCK_IMAGE_BROKEN=1 makes /proc a file: an image the OCI runtime cannot
# start (crun mounts procfs there), for the tests of how a container start
# failure is diagnosed.
if [[ ${MOCK_IMAGE_BROKEN:-0} == 1 ]]; then
	rmdir "$WORK/root/proc"
	printf 'not a directory\n' >"$WORK/root/proc"
fi
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$WORK/root/etc/passwd"
printf 'root:x:0:\n' >"$WORK/root/etc/group"
chmod 0755 "$WORK/root/usr/local/bin/slurmbench"
# The serving tools a trtllm_serve or vllm-router recipe starts, under
# their real names: each calls the mock engine's stand-in for it
# (mockengine/standin), which takes the real tool's flags and refuses others.
for tool in trtllm-serve trtllm-llmapi-launch vllm vllm-router; do
	printf '#!/bin/sh\nexec /usr/local/bin/slurmbench mock-tool %s "$@"\n' "$tool" >"$WORK/root/usr/local/bin/$tool"
	chmod 0755 "$WORK/root/usr/local/bin/$tool"
done
chmod 1777 "$WORK/root/tmp"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
	--mode='u+rw,go+r,go-w' -C "$WORK/root" -cf "$WORK/layer.tar" .

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }
LAYER=sha256:$(sha "$WORK/layer.tar")
printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created_by":"slurmbench testcluster/mock-image.sh"}]}' \
	"$ARCH" "$LAYER" >"$WORK/config.json"
CONFIG=sha256:$(sha "$WORK/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"%s","size":%d},"layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar","digest":"%s","size":%d}]}' \
	"$CONFIG" "$(size "$WORK/config.json")" "$LAYER" "$(size "$WORK/layer.tar")" >"$WORK/manifest.json"
MANIFEST=sha256:$(sha "$WORK/manifest.json")

URL=http://$(registry_addr)/v2/$REPO
rcurl() { in_root curl -sS --fail --max-time 120 "$@"; }
# Every push of the same binary is the same manifest under any tag, and
# parallel tests push at once: the registry's log showed a manifest HEAD
# answered 500 ("invalid checksum digest format") while another tag of the
# same manifest was pushed. Reads, which change nothing, are asked again.
rread() { rcurl --retry 4 --retry-delay 1 "$@"; }
push_blob() { # FILE DIGEST
	if rread -o /dev/null -I "$URL/blobs/$2" 2>/dev/null; then return 0; fi
	local loc
	loc=$(rcurl -D - -o /dev/null -X POST "$URL/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
	[[ -n $loc ]] || die "the registry gave no upload location for $2"
	[[ $loc == http* ]] || loc=http://$(registry_addr)$loc
	case $loc in *\?*) loc+="&digest=$2" ;; *) loc+="?digest=$2" ;; esac
	rcurl -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$WORK_IN/${1##*/}" "$loc" ||
		die "pushing blob $2 failed"
}
push_blob "$WORK/layer.tar" "$LAYER"
push_blob "$WORK/config.json" "$CONFIG"
rcurl -o /dev/null -X PUT -H 'Content-Type: application/vnd.docker.distribution.manifest.v2+json' \
	--data-binary "@$WORK_IN/manifest.json" "$URL/manifests/$TAG" || die "pushing the manifest failed"
got=$(rread -I -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "$URL/manifests/$TAG" |
	tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p')
[[ $got == "$MANIFEST" ]] || die "the registry reports digest '$got' for $REPO_TAG, the pushed manifest is $MANIFEST"
printf '%s/%s:%s@%s\n' "$(registry_addr)" "$REPO" "$TAG" "$MANIFEST"
