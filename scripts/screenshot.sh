#!/usr/bin/env bash
# Retakes the README's picture of a booking saga in the Temporal Web UI.
# Run it from the repository's root with the dev stack up
# (go run ./worker -dev); it books one viewing on the demo catalogue and
# sends a competitor for the same slot (a conflict), then photographs the
# first saga and the list of bookings in headless Chromium (Debian's
# chromium package).
#
#   scripts/screenshot.sh [saga.png] [list.png] [data-dir]
set -euo pipefail
out=$(realpath -m "${1:-docs/ui-booking.png}")
list=$(realpath -m "${2:-docs/ui-bookings.png}")
data=${3:-.bookingsaga}
book() {
  go run ./starter -payload-keys "$data/payload-keys.json" book -json -property paris-marais-12 \
    -agent agent-claire -local "${day}T${at}" -zone Europe/Paris -policy demo-2026-11
}
field() { printf '%s' "$1" | sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p"; }
# A slot at a random half hour ten to thirty days ahead (the end-to-end
# test and its public-client example book fixed slots within a week, and
# a conflict with them failed a CI run); another if it is taken.
for try in 1 2 3 4 5; do
  day=$(TZ=Europe/Paris date -d "+$((10 + RANDOM % 20)) days" +%F)
  at=$(printf '%02d:%s' $((9 + RANDOM % 8)) $([ $((RANDOM % 2)) = 0 ] && echo 00 || echo 30))
  receipt=$(book)
  status=$(field "$receipt" status)
  [ "$status" = conflict ] || break
done
key=$(field "$receipt" request_key)
if [ -z "$key" ] || [ "$status" != confirmed ]; then
  echo "screenshot: the booking was not confirmed: $receipt" >&2
  exit 1
fi
book | grep -q '"status": *"conflict"' || { echo "screenshot: the competitor was not refused" >&2; exit 1; }
mkdir -p "$(dirname "$out")" "$(dirname "$list")"
cd scripts/screenshot && go run . -ui "${TEMPORAL_UI:-http://127.0.0.1:8233}" -key "$key" -out "$out" -list "$list"
