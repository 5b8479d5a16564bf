# The image docker-compose.yml runs: the static skiff binary on Debian with
# what a node needs (iptables, nft, ip, the CNI plugins in /usr/lib/cni).
# Pods use the process runtime (their command runs as is: `skiff netexec`
# is the binary itself). Untested: written on a machine without a docker
# engine (see docs/operating.md, "docker compose").
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -tags grpcnotrace -ldflags '-s -w' -o /out/skiff ./cmd/skiff

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables nftables iproute2 containernetworking-plugins ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/skiff /usr/local/bin/skiff
ENTRYPOINT ["skiff"]
