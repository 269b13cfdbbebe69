#!/usr/bin/env bash
# The main job on the embedded default: a complete benchmark of the mock
# 2P1D topology (examples/mock-2p1d.yaml, a schema-2 recipe) on the project's test cluster (submitted through slurmrestd,
# driven inside the allocation), the native SA-Bench client at c8 and c32,
# the native gsm8k eval, results staged into demo-out/, the summary printed.
# Run by `make demo` with the cluster's environment (scripts/with-cluster.sh).
set -euo pipefail
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
sb=$repo/bin/slurmbench
demo=/srv/slurmbench/shared/demo
: "${SLURM_REST_URL:?no test cluster: run as root (make demo starts it)}"

# A real container path: Slurm's own OCI containers (srun --container, crun
# through oci.conf) start bundles that skopeo and umoci import from the
# cluster's registry, where this build's mock-engine image is pushed first
# (the staged manifest records its digest). profiles/testcluster.toml says so.
: "${SLURMBENCH_CLUSTER_REGISTRY:?the test cluster has no registry (testcluster/up.sh starts one)}"
mkdir -p "$demo/runs" "$demo/squash" "$demo/models/mock"
chmod 0777 "$demo/runs" "$demo/squash"
pushed=$(bash "$repo/testcluster/mock-image.sh" "$sb" slurmbench/mock-engine:demo)
echo "demo: mock-engine image $pushed" >&2
# The eval's GSM8K data is built into the binary; the mock engine answers
# from a key made from the same data (95 % right), on the shared filesystem.
"$sb" mock-answer-key --accuracy 0.95 --out "$demo/models/mock/gsm8k-answer-key.jsonl"

out=$repo/demo-out
rm -rf "$out"
# Pinned by digest: the image cache keys on it, so a rebuilt image is
# imported again rather than an older import of the same tag reused.
# TRANSPORT=cli (make demo TRANSPORT=cli) submits and follows the job with
# Slurm's own commands instead of slurmrestd (profiles/testcluster-cli.toml).
profile=$repo/profiles/testcluster.toml
case ${SLURMBENCH_DEMO_TRANSPORT:-rest} in
rest | "") ;;
cli) profile=$repo/profiles/testcluster-cli.toml ;;
*) echo "demo: TRANSPORT=$SLURMBENCH_DEMO_TRANSPORT is not rest or cli" >&2; exit 2 ;;
esac
echo "demo: profile $profile" >&2
exec "$sb" run --profile "$profile" --recipe "$repo/examples/mock-2p1d.yaml" --image "$pushed" \
	--run-eval true --eval-conc 64 --stage-dir "$out" --result-filename demo_mock-2p1d
