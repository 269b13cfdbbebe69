#!/usr/bin/env bash
# REST-only end-to-end check of the running test cluster (curl + bash):
#  1. /ping answers "pinged": "UP" on v0.0.40, v0.0.41 and v0.0.42;
#  2. a 3-node job with tres_per_node gres/gpu:4 runs one srun step per node
#     (hostname + CUDA_VISIBLE_DEVICES), executes a script from the shared dir,
#     and serves one TCP connection from a step that the host connects to
#     (at the node address that REST reports);
#  3. the job ends COMPLETED; its output is checked; timings are printed.
# Reads the env file written by up.sh (SLURMBENCH_CLUSTER_ENV) unless
# SLURM_REST_URL and SLURM_JWT are already set. Exit 0 = SMOKE OK.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ -z ${SLURM_REST_URL:-} || -z ${SLURM_JWT:-} ]]; then
	[[ -r $ENV_FILE ]] || die "no env file $ENV_FILE (run testcluster/up.sh first)"
	# shellcheck disable=SC1090
	. "$ENV_FILE"
fi
SHARED=${SLURMBENCH_SHARED_DIR:-$SHARED}
PARTITION=${SLURM_PARTITION:-$PARTITION}
API=${SMOKE_API:-v0.0.41}
PORT=${SMOKE_TCP_PORT:-18080}

if ! command -v curl >/dev/null 2>&1; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		ensure_host_tools curl:curl
	else
		log "SMOKE SKIPPED: curl is not installed and cannot be installed here"
		exit 0
	fi
fi

BODY=$(mktemp)
trap 'rm -f "$BODY"' EXIT

# rest METHOD PATH [JSON]: body in $BODY, HTTP status on stdout.
rest() {
	local args=(-sS -o "$BODY" -w '%{http_code}' -X "$1" -H "X-SLURM-USER-NAME: ${SLURM_USER:-slurmtest}")
	[[ $# -ge 3 ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
	# The token header comes from a pipe, never argv (which any user on
	# the host can read); the pipe lives as long as this one command.
	curl "${args[@]}" -H @<(printf 'X-SLURM-USER-TOKEN: %s\n' "$SLURM_JWT") "$SLURM_REST_URL$2"
}
# field NAME prints the first string or number value of "NAME" in $BODY.
field() {
	tr -d ' \n' <"$BODY" | grep -o "\"$1\":\(\[\"[^\"]*\"\|\"[^\"]*\"\|[0-9]*\)" | head -n1 |
		sed 's/^[^:]*:\[\{0,1\}"\{0,1\}//; s/"$//'
}
fail() {
	log "SMOKE FAILED: $*"
	[[ -s $BODY ]] && head -c 2000 "$BODY" >&2 && echo >&2
	exit 1
}

T0=$(now_ms)
for v in v0.0.40 v0.0.41 v0.0.42; do
	code=$(rest GET "/slurm/$v/ping")
	[[ $code == 200 ]] && grep -q '"pinged": *"UP"' "$BODY" || fail "/slurm/$v/ping: HTTP $code, not pinged UP"
done
log "ping v0.0.40/41/42 UP ($(since "$T0"))"

# Job files live in the shared dir, owned by the job user.
DIR=$SHARED/smoke
mkdir -p "$DIR"
chown "$JOB_UID:$JOB_UID" "$DIR" 2>/dev/null || true
printf '#!/bin/bash\necho "exec-check ok on $(hostname)"\n' >"$DIR/exec-check.sh"
chmod 0755 "$DIR/exec-check.sh"

read -r -d '' SCRIPT <<EOF || true
#!/bin/bash
set -u
mapfile -t NODES < <(scontrol show hostnames "\$SLURM_JOB_NODELIST")
echo "batch on \$(hostname) nodes=\${NODES[*]}"
for n in "\${NODES[@]}"; do
  srun --overlap -N1 -n1 -w "\$n" bash -c 'echo "step \$SLURM_STEP_ID on \$(hostname) CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES:-none}"' &
done
wait
$DIR/exec-check.sh
srun --overlap -N1 -n1 -w "\${NODES[0]}" bash -c 'echo "hello from \$(hostname)" | timeout 60 nc -N -l $PORT'
echo "listener rc=\$?"
EOF
json_string() { # JSON-escape stdin
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' | awk '{ printf "%s\\n", $0 }'
}
REQ=$(printf '{"job":{"name":"smoke","partition":"%s","nodes":"3","tasks_per_node":1,"tres_per_node":"gres/gpu:4","time_limit":5,"current_working_directory":"%s","environment":["PATH=/usr/bin:/bin","HOME=/home/%s"],"standard_output":"%s/smoke-%%j.out","standard_error":"%s/smoke-%%j.err","script":"%s"}}' \
	"$PARTITION" "$DIR" "$JOB_USER" "$DIR" "$DIR" "$(printf '%s\n' "$SCRIPT" | json_string)")

T_SUB=$(now_ms)
code=$(rest POST "/slurm/$API/job/submit" "$REQ")
[[ $code == 200 ]] || fail "submit: HTTP $code"
JOB=$(field job_id)
[[ $JOB =~ ^[0-9]+$ ]] || fail "submit: no job_id"
log "submitted job $JOB"

state() {
	code=$(rest GET "/slurm/$API/job/$JOB")
	[[ $code == 200 ]] || fail "GET job/$JOB: HTTP $code"
	field job_state
}

# Wait for RUNNING, then connect to the listener step on the batch host.
T_RUN=
deadline=$(($(now_ms) + 60000))
while :; do
	st=$(state)
	case $st in
	RUNNING) T_RUN=$(now_ms); break ;;
	PENDING | CONFIGURING) ;;
	*) fail "job $JOB is $st before it ran" ;;
	esac
	(($(now_ms) < deadline)) || fail "job $JOB still $st after 60 s"
	sleep 0.1
done
BATCH_HOST=$(field batch_host)
code=$(rest GET "/slurm/$API/node/$BATCH_HOST")
[[ $code == 200 ]] || fail "GET node/$BATCH_HOST: HTTP $code"
ADDR=$(field address)
log "job $JOB RUNNING after $(since "$T_SUB"); connecting to $BATCH_HOST ($ADDR:$PORT)"
GREETING=
deadline=$(($(now_ms) + 30000))
while [[ -z $GREETING ]]; do
	GREETING=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" && cat <&3' "$ADDR" "$PORT" 2>/dev/null || true)
	[[ -n $GREETING ]] && break
	(($(now_ms) < deadline)) || fail "no TCP listener on $ADDR:$PORT within 30 s"
	sleep 0.2
done
[[ $GREETING == "hello from $BATCH_HOST" ]] || fail "listener said '$GREETING'"
log "host reached $ADDR:$PORT inside the job: '$GREETING'"

deadline=$(($(now_ms) + 120000))
while :; do
	st=$(state)
	case $st in
	COMPLETED) break ;;
	RUNNING | COMPLETING | CONFIGURING) ;;
	*) fail "job $JOB ended $st (see $DIR/smoke-$JOB.out/.err)" ;;
	esac
	(($(now_ms) < deadline)) || fail "job $JOB still $st after 120 s"
	sleep 0.1
done
T_DONE=$(now_ms)

OUT=$DIR/smoke-$JOB.out
[[ -r $OUT ]] || fail "no output file $OUT"
steps=$(grep -c '^step [0-9]* on .* CUDA_VISIBLE_DEVICES=0,1,2,3' "$OUT" || true)
hosts=$(grep '^step ' "$OUT" | awk '{ print $4 }' | sort -u | wc -l)
((steps == 3 && hosts == 3)) || { cat "$OUT" >&2; fail "expected 3 steps on 3 nodes with 4 GPUs each"; }
grep -q '^exec-check ok' "$OUT" || { cat "$OUT" >&2; fail "could not execute a script from $DIR"; }
grep -q '^listener rc=0' "$OUT" || { cat "$OUT" >&2; fail "listener step failed"; }
sed 's/^/  | /' "$OUT" >&2

printf 'SMOKE OK: job %s on %s: submit->RUNNING %s, RUNNING->COMPLETED %s, total %s\n' "$JOB" \
	"$(grep '^step ' "$OUT" | awk '{ print $4 }' | sort | paste -sd, -)" \
	"$(fmt_ms $((T_RUN - T_SUB)))" "$(fmt_ms $((T_DONE - T_RUN)))" "$(since "$T0")"
