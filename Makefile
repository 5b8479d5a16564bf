# Skiff's commands:
#   make run        build Skiff and run a server (control plane) on 127.0.0.1:6443
#   make test       every test (what CI runs through .ci/run)
#   make demo       the Service flow end to end in a network namespace of its own (root)
#   make demo-stop  stop the demo and remove everything it made
#   make e2e        the end-to-end suite alone (root; part of make test)
#   make realworld  real users' manifests through kubectl (part of make test)
# docs/testing.md describes every target.
GO        ?= go
BIN       ?= bin/skiff
DATA_DIR  ?= $(CURDIR)/.skiff
FUZZTIME  ?= 5s
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/skiff-dev/skiff/internal/version.GitCommit=$(VERSION)
# grpcnotrace drops gRPC's golang.org/x/net/trace (html/template), which
# would turn off the linker's dead-method elimination: see hack/deadcode.
TAGS      ?= grpcnotrace
# staticcheck runs in make vet, at this version (from the Go module proxy).
STATICCHECK ?= v0.8.2

# Packages whose code runs goroutines concurrently: tested with -race.
RACE_PKGS := ./store/... ./apiserver/... ./client/... ./controller/... ./scheduler/... ./server/... ./dns/... ./netagent/... ./web/...

.PHONY: build run test unit race fuzz vet bench deps clean compat realworld realworld-baseline ipvs-vm demo demo-stop e2e

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/skiff

run: build
	$(BIN) server --data-dir $(DATA_DIR) --listen 127.0.0.1:6443 --disable-agent

demo:
	./hack/demo.sh

demo-stop:
	./hack/demo-stop.sh

# e2e runs the flow's behaviours against a real server, agent, CNI and
# kernel rules in test-made namespaces, in iptables and nftables modes (it
# is also part of `unit`; it skips without root).
e2e:
	$(GO) test -count=1 -v -timeout 10m ./test/e2e/

# deps installs what the tests need on a fresh Debian machine (root).
deps:
	./hack/install-deps.sh

test: deps vet unit race fuzz compat realworld ipvs-vm

# The build without the containerd runtime (-tags skiff_nocontainerd, the
# smaller agent) is vetted and tested too. hack/deadcode fails when either
# build can reach a call that keeps every exported method in the binary.
vet:
	$(GO) vet ./...
	$(GO) vet -tags skiff_nocontainerd ./netagent/... ./cli/imagecmd/ ./cmd/skiff/
	$(GO) run ./hack/deadcode -tags '$(TAGS)'
	$(GO) run ./hack/deadcode -tags '$(TAGS),skiff_nocontainerd'
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) -tags skiff_nocontainerd ./netagent/... ./cli/imagecmd/ ./cmd/skiff/

unit:
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags skiff_nocontainerd -run NoContainerd ./netagent/

# The race pass uses -short: long soak loops (1,000 CNI cycles, crash storms)
# already ran in full in `unit`.
race:
	$(GO) test -count=1 -race -short $(RACE_PKGS)

# compat runs kubectl and client-go against a real server (own module).
compat:
	GO=$(GO) ./hack/kubectl-compat.sh

# realworld applies every object of test/realworld's manifest sets alone
# with a real kubectl (built as compat builds it, or $KUBECTL) against a
# control-plane-only server on loopback, and fails when an object that
# test/realworld/baseline.txt lists is refused. realworld-baseline rewrites
# the baseline with what passes now. REALWORLD_SETS="gitea ..." runs some sets.
REALWORLD_SETS ?=
realworld: build
	GO=$(GO) ./hack/realworld.sh $(BIN) $(REALWORLD_SETS)

realworld-baseline: build
	GO=$(GO) ./hack/realworld.sh --write-baseline $(BIN) $(REALWORLD_SETS)

# ipvs-vm runs the ipvs proxy mode's real-kernel tests in qemu: this
# kernel has no ip_vs, Debian's cloud kernel (fetched and cached) has.
ipvs-vm:
	GO=$(GO) ./hack/ipvs-vm.sh

# Each fuzz target runs for FUZZTIME (go test allows one -fuzz target per run).
fuzz:
	./hack/fuzz.sh $(FUZZTIME)

# bench runs docs/performance.md's figures (hack/bench.sh), then the
# package micro-benchmarks.
bench:
	./hack/bench.sh
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./store/ ./apiserver/...

clean:
	rm -rf bin
