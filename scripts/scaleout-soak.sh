#!/usr/bin/env bash
# scaleout-soak.sh [rates] [duration] [kill-after]: the soak on a scaled-out
# deployment. The dev stack (Temporal on its PostgreSQL, the store, the
# fakes) brings worker A and API A; worker B and API B run beside them as
# a deployment runs them (`worker` and `starter serve`, no dev stack), on
# the same Temporal and store. The soak calls both APIs in turn and sends a
# call one answers nothing to the other. kill-after (e.g. 45s) into each
# rate, worker B and API B get kill -9 and stay down for the rest of it;
# both are started again between rates. BENCHMARKS.md quotes one run.
#
#   scripts/scaleout-soak.sh 10,20 60s 30s
set -euo pipefail
export GOTOOLCHAIN=go1.27.3
rates=${1:-10,20}
per=${2:-60s}
killAfter=${3:-30s}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/bs-scale-XXXX)
cd "$repo"
go build -o "$work/worker" ./worker
go build -o "$work/starter" ./starter
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

"$work/worker" -dev -data-dir "$work/data" -api-rate-limit 0 >"$work/stack.log" 2>&1 &
pids+=($!)
until grep -q 'dev stack ready' "$work/stack.log"; do
	kill -0 "${pids[0]}" || { cat "$work/stack.log"; exit 1; }
	sleep 0.5
done
dsn=$(grep -o 'host=[^ ]* user=postgres dbname=bookingsaga sslmode=disable' "$work/stack.log" | head -1)
key=$(awk '/dev-agent key/ {print $3}' "$work/stack.log")
export PAYLOAD_KEYS_FILE=$work/data/payload-keys.json AZURE_CLIENT_SECRET=dev-graph-secret

# The second pair, with only the flags a deployment sets; the fakes'
# addresses and the fake tenant are the dev stack's defaults.
startB() {
	"$work/worker" -database-url "$dsn" -health-listen 127.0.0.1:9091 -metrics-listen 127.0.0.1:9465 -reconcile-every 0 \
		-calendar-endpoint http://127.0.0.1:8091/calendar/v3/ -calendar-no-auth \
		-microsoft-tenant 00000000-0000-4000-8000-00000000de70 -microsoft-client-id 00000000-0000-4000-8000-0000000000a1 \
		-graph-endpoint http://127.0.0.1:8093/v1.0 -microsoft-login http://127.0.0.1:8093 \
		-crm-url http://127.0.0.1:8092 -crm-token dev-crm-token -webhook-allow-loopback >>"$work/worker-b.log" 2>&1 &
	workerB=$!
	"$work/starter" serve -listen 127.0.0.1:8081 -database-url "$dsn" -keys "$work/data/api-keys.json" -rate-limit 0 >>"$work/api-b.log" 2>&1 &
	apiB=$!
	until curl -sf http://127.0.0.1:9091/healthz >/dev/null && curl -sf http://127.0.0.1:8081/readyz >/dev/null; do sleep 0.2; done
}

IFS=, read -ra ladder <<<"$rates"
for rate in "${ladder[@]}"; do
	startB
	API_KEY=$key "$work/starter" soak -api http://127.0.0.1:8080,http://127.0.0.1:8081 -rates "$rate" -duration "$per" -noop=false -climb=false >"$work/soak-$rate.txt" 2>&1 &
	soak=$!
	sleep "$killAfter"
	kill -9 "$workerB" "$apiB"
	wait "$soak" || true
	wait "$workerB" "$apiB" 2>/dev/null || true
	echo "rate $rate/s for $per, two workers and two APIs; worker B and API B killed -9 at $killAfter:"
	tail -n 2 "$work/soak-$rate.txt"
done
echo "logs in $work"
