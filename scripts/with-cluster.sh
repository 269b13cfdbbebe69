#!/usr/bin/env bash
# with-cluster.sh CMD [ARGS...]: run CMD with the test cluster's environment
# (SLURM_REST_URL, SLURM_JWT, SLURM_USER, SLURM_PARTITION, ...).
#
# It starts the project's test cluster (testcluster/up.sh) when it can (root,
# Debian mirror reachable or rootfs cached) and stops it afterwards if this
# script started it. Without the cluster the command still runs: the
# cluster tests then skip with a message, unless SLURMBENCH_REQUIRE_CLUSTER=1
# (set by CI), which makes them fail instead.
set -uo pipefail
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
if [[ -n ${SLURMBENCH_CLUSTER_INSTANCE:-} ]]; then
	env_file=${SLURMBENCH_CLUSTER_ENV:-/srv/slurmbench-$SLURMBENCH_CLUSTER_INSTANCE/env}
	rest_port=$((6820 + 10 * SLURMBENCH_CLUSTER_INSTANCE))
else
	env_file=${SLURMBENCH_CLUSTER_ENV:-/srv/slurmbench/env}
	rest_port=6820
fi
started=0

if [[ -n ${SLURM_REST_URL:-} ]]; then
	echo "with-cluster: using the cluster in the environment ($SLURM_REST_URL)" >&2
elif [[ $(id -u) == 0 ]]; then
	was_up=0
	[[ -s $env_file ]] && (exec 3<>/dev/tcp/127.0.0.1/"${SLURMBENCH_CLUSTER_REST_PORT:-$rest_port}") 2>/dev/null && was_up=1
	t0=$(date +%s)
	if bash "$repo/testcluster/up.sh" >/dev/null; then
		echo "with-cluster: test cluster up in $(($(date +%s) - t0)) s" >&2
		[[ $was_up == 0 ]] && started=1
		# shellcheck disable=SC1090
		. "$env_file"
		# The mock-engine image in the cluster's registry, built from this
		# checkout's binary (make test and make demo build it first).
		bin=$repo/bin/linux-$(go env GOARCH 2>/dev/null || echo amd64)/slurmbench
		if [[ -x $bin && -n ${SLURMBENCH_CLUSTER_REGISTRY:-} ]]; then
			bash "$repo/testcluster/mock-image.sh" "$bin" slurmbench/mock-engine:demo >&2 ||
				echo "with-cluster: could not push the mock-engine image" >&2
		fi
	else
		echo "with-cluster: could not start the test cluster (see above)" >&2
		[[ ${SLURMBENCH_REQUIRE_CLUSTER:-0} == 1 ]] && exit 1
	fi
else
	echo "with-cluster: not root, so no test cluster: cluster tests will skip" >&2
fi

"$@"
rc=$?
if [[ $started == 1 && ${SLURMBENCH_KEEP_CLUSTER:-0} != 1 ]]; then
	bash "$repo/testcluster/down.sh" >&2 || echo "with-cluster: down.sh failed" >&2
fi
exit $rc
