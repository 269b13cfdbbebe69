#!/usr/bin/env bash
# chromium.sh: install Debian's headless Chromium (chromium-headless-shell)
# for the tests that render report.html in a real browser
# (internal/browsertest). Needs root; idempotent; Debian's mirror only.
set -euo pipefail
command -v chromium-headless-shell >/dev/null && exit 0
command -v chromium >/dev/null && exit 0
if [[ $(id -u) != 0 ]]; then
	echo "chromium: not root: cannot install chromium-headless-shell" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends chromium-headless-shell fonts-dejavu-core >/dev/null ||
	{ apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium-headless-shell fonts-dejavu-core >/dev/null; }
command -v chromium-headless-shell >/dev/null
