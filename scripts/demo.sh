#!/usr/bin/env bash
# The main job on the embedded default: plan the mock 2P1D topology for the
# project's test cluster. (`slurmbench run` takes over here once it lands:
# submit, drive, benchmark, collect.)
set -euo pipefail
repo=$(cd -- "$(dirname -- "$0")/.." && pwd -P)
sb=$repo/bin/slurmbench
"$sb" render --profile "$repo/profiles/testcluster.toml" --recipe "$repo/examples/mock-2p1d.yaml"
