#!/bin/bash
# compile-cost.sh OLD NEW: what a change adds to the build. Each commit is
# exported (git archive) and built cold (an empty GOCACHE; the module cache
# is shared), then NEW is built over OLD's cache, as after a pull.
# BENCHMARKS.md quotes one run.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3
old=${1:?usage: compile-cost.sh OLD NEW}
new=${2:?usage: compile-cost.sh OLD NEW}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in old new; do
	mkdir "$work/$side"
	git -C "$repo" archive "${!side}" | tar -x -C "$work/$side"
done
took() { local s; s=$(date +%s.%N); "$@" >/dev/null; echo "$(date +%s.%N) - $s" | bc; }
for side in old new; do
	cd "$work/$side"
	export GOCACHE=$work/cache-$side
	echo "$side (${!side}): cold go build ./... $(took go build ./...) s, $(go list -deps ./... | wc -l) packages," \
		"worker $(go build -o "$work/worker-$side" ./worker && stat -c %s "$work/worker-$side") bytes"
	go list -deps ./... | sort >"$work/$side.deps"
done
cp -r "$work/cache-old" "$work/cache-pull"
cd "$work/new"
echo "new over old's cache: $(GOCACHE=$work/cache-pull took go build ./...) s"
echo "packages only new builds: $(comm -13 "$work/old.deps" "$work/new.deps" | tr '\n' ' ')"
