#!/usr/bin/env bash
# A generic service for the services end-to-end test (slurmbench testdata):
# it starts, logs unrelated lines for READY_AFTER seconds, then logs the
# line its readiness pattern waits for (InferenceX's UMBP server logs "host
# memory registered for GPU access" once it is usable), records when it did
# in $MARKER_DIR/<name>.ready (Unix seconds), and serves until stopped.
set -euo pipefail
: "${MARKER_DIR:?}" "${READY_AFTER:?}"
name=${1:?usage: slow-ready.sh NAME}
echo "service $name starting on $(hostname); preamble ran: ${PREAMBLE_RAN:-no}"
for ((i = 0; i < READY_AFTER * 4; i++)); do
	echo "warming up $i"
	sleep 0.25
done
date +%s.%N > "$MARKER_DIR/$name.ready.tmp"
mv "$MARKER_DIR/$name.ready.tmp" "$MARKER_DIR/$name.ready"
echo "host memory registered for GPU access"
exec sleep infinity
