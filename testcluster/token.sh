#!/usr/bin/env bash
# Print a fresh JWT for the job user (slurmtest), nothing else on stdout.
#   token.sh [LIFESPAN_SECONDS]   default: the cluster's long lifespan
# Tests use a short lifespan (e.g. 1) to get an expired token. Run as root on
# the host while the cluster is up.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) == 0 ]] || die "run as root"
lifespan=${1:-$TOKEN_LIFESPAN}
[[ $lifespan =~ ^[0-9]+$ && $lifespan -gt 0 ]] || die "lifespan must be a positive number of seconds"
[[ -f $RUN/slurmctld.pid ]] && is_ours "$(<"$RUN/slurmctld.pid")" || die "the cluster is not up (run testcluster/up.sh)"
mint_token "$lifespan"
