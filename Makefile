# Skiff's two commands:
#   make run    build Skiff and run a server (control plane) on 127.0.0.1:6443
#   make test   every test (what CI runs through .ci/run)
GO        ?= go
BIN       ?= bin/skiff
DATA_DIR  ?= $(CURDIR)/.skiff
FUZZTIME  ?= 5s
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/skiff-dev/skiff/internal/version.GitCommit=$(VERSION)

# Packages whose code runs goroutines concurrently: tested with -race.
RACE_PKGS := ./store/... ./apiserver/... ./client/... ./controller/... ./scheduler/... ./server/... ./dns/... ./netagent/... ./web/...

.PHONY: build run test unit race fuzz vet bench deps clean compat ipvs-vm

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/skiff

run: build
	$(BIN) server --data-dir $(DATA_DIR) --listen 127.0.0.1:6443 --disable-agent

# deps installs what the tests need on a fresh Debian machine (root).
deps:
	./hack/install-deps.sh

test: deps vet unit race fuzz compat ipvs-vm

vet:
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

# The race pass uses -short: long soak loops (1,000 CNI cycles, crash storms)
# already ran in full in `unit`.
race:
	$(GO) test -count=1 -race -short $(RACE_PKGS)

# compat runs kubectl and client-go against a real server (own module).
compat:
	GO=$(GO) ./hack/kubectl-compat.sh

# ipvs-vm runs the ipvs proxy mode's real-kernel tests in qemu: this
# kernel has no ip_vs, Debian's cloud kernel (fetched and cached) has.
ipvs-vm:
	GO=$(GO) ./hack/ipvs-vm.sh

# Each fuzz target runs for FUZZTIME (go test allows one -fuzz target per run).
fuzz:
	./hack/fuzz.sh $(FUZZTIME)

# bench runs the README's performance figures (hack/bench.sh), then the
# package micro-benchmarks.
bench:
	./hack/bench.sh
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./store/ ./apiserver/...

clean:
	rm -rf bin
