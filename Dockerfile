# syntax=docker/dockerfile:1
# Two binaries in one small image: the worker and the agent API (starter),
# built with -tags nodev: the dev stack (an embedded Temporal server, its
# UI, SQLite) is left out, a third of the size (README, "Run it").
# Build stage: the toolchain the module needs (go.temporal.io/server wants
# Go >= 1.26.10).
FROM golang:1.27.3-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -tags nodev -trimpath -ldflags="-s -w" -o /out/worker ./worker \
 && CGO_ENABLED=0 go build -tags nodev -trimpath -ldflags="-s -w" -o /out/starter ./starter

# Runtime: distroless static, no shell, runs as the unprivileged "nonroot"
# user. Time zone rules are compiled into the binaries (internal/localtime's
# copy of the Go toolchain's IANA data): the image's own are never read.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /out/starter /usr/local/bin/
USER nonroot:nonroot
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/worker"]
