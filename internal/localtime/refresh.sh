#!/bin/sh
# Copies the Go toolchain's IANA zone database (the zip that time/tzdata
# embeds) and its release name beside the code that serves it: run after a
# toolchain bump with `go generate ./internal/localtime`.
set -eu
root=$(go env GOROOT)
cp "$root/lib/time/zoneinfo.zip" zoneinfo.zip
sed -n 's/^DATA=//p' "$root/lib/time/update.bash" > zoneinfo.version
