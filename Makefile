# Litterbox. `make test` runs everything CI runs: unit, integration (real
# docker and git) and end-to-end (bats, the built binary) tests.
# `make check` is the quick loop: build, lint and unit tests, no engine.
GO          ?= go
# Every build and test but the race detector's (which needs cgo) is
# static, as the release is: one build configuration, so that lint, the
# binary, the integration tests and fuzzing compile the packages once
# between them, and test what ships (Go's own resolver, no libc).
export CGO_ENABLED ?= 0
BIN         := bin/litterbox
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# BUILD names the source both programs are built from: the tree `git add -A`
# would commit now (tracked and untracked files as they are), written with
# a copy of the index; nothing outside a git work tree. litterbox delivers
# the litterbox-helper beside it only when the two carry the same build
# (internal/helperbin, sameBuild).
BUILD       := $(shell t=$$(mktemp -d) && cp "$$(git rev-parse --git-path index 2>/dev/null)" $$t/index 2>/dev/null; GIT_INDEX_FILE=$$t/index git add -A 2>/dev/null && GIT_INDEX_FILE=$$t/index git write-tree 2>/dev/null; rm -rf $$t)
LDFLAGS     := -s -w -X main.version=$(VERSION)$(if $(BUILD), -X main.build=$(BUILD))
# The helper runs in Linux containers: beside a litterbox for another
# system it is the Linux build for its architecture.
HOSTOS      := $(shell $(GO) env GOOS)
HOSTARCH    := $(shell $(GO) env GOARCH)
HELPER      := $(if $(filter linux,$(HOSTOS)),litterbox-helper,litterbox-helper-linux-$(HOSTARCH))
GOBIN_DIR   := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BATS        ?= bats
# What the suites that need the test images depend on; make test-engines
# empties it, its images being made already.
IMAGE       ?= image
RUNTIME     ?= docker

.PHONY: release all build install check check-unit timed-lint timed-unit timed-late lint-darwin images test test-extended e2e-extended k8s-up k8s-down e2e-k8s unit integration integration-attacks integration-rest integration-gvisor test-engines e2e-docker-a e2e-docker-b e2e-kubernetes test-cluster integration-cluster e2e-engine-wide e2e-cluster e2e-gvisor e2e lint lint-fmt lint-vet lint-staticcheck lint-procstart lint-imports lint-tests lint-shell fuzz image test-images bench bench-smoke e2e-gvisor-podman clean

all: build

# litterbox and, beside it, litterbox-helper: the program copied into each
# sandbox (litterbox can serve as its own helper, but starts slower).
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/litterbox
	CGO_ENABLED=0 GOOS=linux $(GO) build -ldflags '$(LDFLAGS)' -o $(dir $(BIN))$(HELPER) ./cmd/litterbox-helper

install:
	CGO_ENABLED=0 $(GO) install -ldflags '$(LDFLAGS)' ./cmd/litterbox
	CGO_ENABLED=0 GOOS=linux $(GO) build -ldflags '$(LDFLAGS)' -o $(GOBIN_DIR)/$(HELPER) ./cmd/litterbox-helper

# The developer's quick loop: the build, every lint check, and the unit tests
# (the replays of recorded docker and git transcripts and the fuzz targets'
# seed corpora among them) without the race detector, which make test's unit
# step keeps. It needs no engine (DOCKER_HOST may point nowhere) and takes
# under 2 minutes on 2 cores; -j2 lets the lint checks use the cores the
# tests leave idle while they wait on git and their timers.
check:
	@$(MAKE) --no-print-directory -j2 --keep-going --output-sync=target check-unit build lint

check-unit:
	$(GO) test -count=1 -timeout 5m ./...

# The integration and e2e tests include the Kubernetes provider's, on a
# throwaway single-node cluster (scripts/k8s/with-cluster.sh: up, run, down;
# its components are built from source once and cached). It needs root.
#
# The suites that talk to engines on this machine run first, two at a time,
# longest first, make -j2 starting the next as soon as one ends: the
# integration tests, the attack table, and the Docker bats suites in two
# halves (without the tests tagged extended; make test-extended has the
# rest: see there). They spend part of their time waiting on an engine,
# but until the cluster's build ends they leave the cores no idle time
# (it takes what they leave), so more at once would not end sooner: CI's
# time is its CPU. Then, with the cluster up, the cluster's suites (the
# contract suite on its three providers, the Kubernetes integration
# tests, kubernetes.bats) beside the attack table's kernel rows under
# gVisor, three at once, since they leave half the cores idle (sampled
# through a whole .ci/run). .ci/run builds its components in the background from the
# start, at the lowest priority, so that build takes what the suites before
# it leave of the cores rather than holding them all back. Last, alone, the
# one test that pauses every sandbox on the engine (tagged engine-wide).
# Each suite's output is printed whole when it ends, with how long it took.
# The binary is built once, before any suite runs it.
#
# Before them, lint and the unit tests (compiling, on the cores) run side
# by side, and beside the test images' build (debootstrap: downloads and
# disk): one after the other they left a core to the cluster's build,
# which has the engine suites' idle time to take later. Fuzzing and the
# macOS build, which need neither an engine nor the cluster, run beside
# the cluster's suites, on the core they leave idle (timed-late).
test:
	@$(MAKE) --no-print-directory -j3 --output-sync=target timed-lint timed-unit images
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory test-engines
	scripts/k8s/with-cluster.sh $(MAKE) --no-print-directory -j4 --output-sync=target IMAGE= $(CLUSTER_SUITES) timed-late
	@$(MAKE) --no-print-directory e2e-engine-wide

images:
	@scripts/timed.sh image $(MAKE) --no-print-directory image

# make test's lint and unit steps, and what it runs beside the cluster's
# suites: fuzzing with one worker, and the macOS build (a whole second
# compile).
LINTS_LATE := lint-darwin
timed-lint:
	@scripts/timed.sh lint $(MAKE) --no-print-directory $(filter-out $(LINTS_LATE),$(LINTS))
timed-unit:
	@scripts/timed.sh unit $(MAKE) --no-print-directory unit
timed-late:
	@scripts/timed.sh lint-late $(MAKE) --no-print-directory $(LINTS_LATE)
	@scripts/timed.sh fuzz $(MAKE) --no-print-directory fuzz FUZZWORKERS=1

# The images are made by then (make test's images step): IMAGE= leaves
# them out of the suites' prerequisites, so that make -j2 starts the suites
# in the order given, longest first, rather than the two that need no
# image while the others wait on its check.
test-engines:
	@$(MAKE) --no-print-directory -j2 --output-sync=target IMAGE= integration-rest integration-attacks e2e-docker-b e2e-docker-a

# The cluster's suites wait on its kubelet and leave the cores half idle,
# and so did the gVisor suite run alone at the end of test-engines: the
# three run side by side.
CLUSTER_SUITES := integration-cluster integration-gvisor e2e-kubernetes
test-cluster:
	@$(MAKE) --no-print-directory -j3 --output-sync=target IMAGE= $(CLUSTER_SUITES)

# What make test (CI) leaves out for time, since other suites cover the
# same ground there: the bats suites again on the cluster; the tools suite
# under gVisor on Docker and on Podman (CI runs the contract suite under
# gVisor on both, and the attack table's kernel rows); the bats tests
# tagged extended (the tools flows through the second MCP client, which
# tests the client, not the sandbox, and the soak, whose invariants the
# stress test checks in CI over fewer calls); and the benchmarks' smoke run. Run
# it before changing a provider or a benchmark, and once per issue.
test-extended: lint build image
	scripts/k8s/with-cluster.sh $(MAKE) --no-print-directory -j2 --output-sync=target e2e-cluster e2e-gvisor e2e-gvisor-podman e2e-extended bench-smoke

# The bats suites' sandboxes, side by side with the other suites', pass the
# default memory budget (75% of the host's memory), which only
# TestIntegrationHostLimits tests, with its own (and the integration tests'
# TestMain lifts it too).
SIDE_BY_SIDE := LITTERBOX_MEMORY_BUDGET=1000%

# The Docker bats suites in two halves of about equal time, without the
# engine-wide test (make e2e runs them all, one after another).
E2E_A := lifecycle review tools soak failures identity network stress mcp cli control
E2E_B := $(filter-out $(E2E_A) kubernetes,$(patsubst e2e/%.bats,%,$(wildcard e2e/*.bats)))
E2E_SOME = $(SIDE_BY_SIDE) LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing --filter-tags '!engine-wide,!extended'
e2e-docker-a:
	scripts/timed.sh $@ env $(E2E_SOME) $(patsubst %,e2e/%.bats,$(E2E_A))
e2e-docker-b:
	scripts/timed.sh $@ env $(E2E_SOME) $(patsubst %,e2e/%.bats,$(E2E_B))
# kubernetes.bats, with the cluster up (make test-cluster).
e2e-kubernetes:
	scripts/timed.sh $@ env $(E2E_SOME) e2e/kubernetes.bats
e2e-engine-wide:
	scripts/timed.sh $@ env LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing --filter-tags engine-wide e2e
# The bats tests tagged extended (make test-extended).
e2e-extended:
	scripts/timed.sh $@ env $(SIDE_BY_SIDE) LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing --filter-tags 'extended,!engine-wide' $(filter-out e2e/kubernetes.bats,$(wildcard e2e/*.bats))

e2e-cluster:
	scripts/timed.sh $@ env $(E2E_K8S)

# The agent-tools suite again, every sandbox under gVisor, through one of
# its two MCP clients (the other is about the client, not the sandbox), and
# litterbox run.
BATS_GVISOR = $(SIDE_BY_SIDE) LITTERBOX_E2E_ISOLATION=gvisor LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing
E2E_GVISOR = $(BATS_GVISOR) --filter '^(mcp-go|litterbox|run)' e2e/tools.bats e2e/run.bats
e2e-gvisor: build image
	scripts/timed.sh $@ env $(E2E_GVISOR)
# The tools suite the same way on Podman, which takes runsc by name (make
# test-extended; 7 tests, 131 s here).
e2e-gvisor-podman: build image
	scripts/timed.sh $@ env LITTERBOX_RUNTIME=podman $(BATS_GVISOR) --filter '^(mcp-go|litterbox)' e2e/tools.bats

# The agent-tools suite again, on the cluster, through one of its MCP
# clients, litterbox run, and the review tests that reach the provider
# (diff, the deletion at merge, upload and download); the rest of review is
# the host's git, whatever the provider. kubernetes.bats, part of e2e, has
# the lifecycle.
E2E_K8S = LITTERBOX_RUNTIME=kubernetes LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing \
	--filter '^(mcp-go|litterbox|run|diff shows|merge applies|upload and download|download|a second download)' e2e/tools.bats e2e/run.bats e2e/review.bats
e2e-k8s: build image
	$(E2E_K8S)

# The cluster alone, left up for a developer: make k8s-up, then
# export KUBECONFIG=/var/lib/litterbox-k8s/kubeconfig; make k8s-down ends it.
k8s-up: image
	scripts/k8s/up.sh
k8s-down:
	scripts/k8s/down.sh

unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 5m ./...

# Each fuzz target (package:Target:executions) on top of its seed corpus
# (which `unit` runs): slugs, config files, unified diffs, tar owner
# rewriting, and the helper protocol's frames and messages, which the host
# reads from inside the sandbox. Budgets are counts, about 5 s each here,
# because a -fuzztime duration trips Go's coordinator race (go.dev/issue/75804,
# fixed in Go 1.27): "context deadline exceeded" with no crasher.
# FUZZSCALE multiplies every count for a longer run; FUZZWORKERS, when
# set, bounds the processes fuzzing at once (GOMAXPROCS otherwise).
FUZZSCALE ?= 1
FUZZWORKERS ?=
FUZZ_TARGETS := internal/hostrepo:FuzzParseName:60000 internal/config:FuzzLoadConfig:8000 internal/unidiff:FuzzApplyPatch:200000 \
	internal/tarstream:FuzzChown:200000 internal/helper/protocol:FuzzDecoders:150000 internal/helper/protocol:FuzzFrameReader:40000 \
	internal/helper/protocol:FuzzCommand:80000 internal/helper/search:FuzzLineMatcher:40000 internal/helper/manifest:FuzzLoadManifest:20000
fuzz:
	@for t in $(FUZZ_TARGETS); do p=$${t%%:*} r=$${t#*:}; f=$${r%%:*} n=$$(( $${r#*:} * $(FUZZSCALE) )); echo "fuzz $$p $$f $${n}x"; \
	  out=$$($(GO) test ./$$p -run '^$$' -fuzz "^$$f\$$" -fuzztime $${n}x $(if $(FUZZWORKERS),-parallel $(FUZZWORKERS)) 2>&1) || { echo "$$out" | grep -v '^fuzz: elapsed'; exit 1; }; done

# Integration tests talk to the real engine; they need the local test image.
# The attack table (two images, 83 rows each) is about half of the suite's
# time and everything else the other half; both spend most of it waiting on
# the engine, so they run as two go test processes side by side, each
# target's output printed whole when it ends. Resource names never collide
# between processes (each carries its pid).
ATTACKS := ^TestIntegrationAttackTable$$
# A suite that hangs ends by go test's -timeout, which prints the tests
# still running, well before CI's own limit ends the whole run unprinted:
# each bound is about three times the suite's time on a loaded machine.
INTEGRATION = scripts/gotest.sh -tags integration -count=1 -timeout $(TIMEOUT)
TIMEOUT = 45m
integration-gvisor integration-cluster: TIMEOUT = 20m
integration: image
	@$(MAKE) --no-print-directory -j2 --output-sync=target integration-attacks integration-rest
	@$(MAKE) --no-print-directory integration-cluster

integration-attacks: $(IMAGE)
	scripts/timed.sh $@ $(INTEGRATION) -run '$(ATTACKS)' ./internal/sandbox

# Everything but the attack table and what needs the test cluster, which
# integration-cluster runs: the contract suite on the cluster's providers
# (LITTERBOX_PROVIDERS groups, internal/testenv) and the Kubernetes tests.
# Only the integration tests, by name, in the packages that have them: the
# unit tests ran already (make unit, with -race), and compiling every
# package's tests again without -race only to run them twice cost minutes
# of both cores. make lint-tests keeps every integration test's name
# within INTEGRATION_TESTS, so that none is left out.
CLUSTER_TESTS := ^TestIntegrationKubernetes
INTEGRATION_TESTS := ^Test(Integration|Matrix|Contract)
INTEGRATION_PKGS = $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' '^//go:build integration' .))))
integration-rest: $(IMAGE)
	LITTERBOX_PROVIDERS=local scripts/timed.sh $@ $(INTEGRATION) -run '$(INTEGRATION_TESTS)' -skip '$(ATTACKS)|$(CLUSTER_TESTS)' $(INTEGRATION_PKGS)

integration-cluster: $(IMAGE)
	LITTERBOX_PROVIDERS=cluster scripts/timed.sh $@ $(INTEGRATION) -run '^TestContract$$|$(CLUSTER_TESTS)' ./internal/sandbox

# The attack table's rows whose defence is the sandbox's kernel, and the
# image with no shell, again with every sandbox under gVisor (runsc
# registered with docker: scripts/gvisor.sh, which .ci/run calls). The
# contract suite runs under gVisor in integration-rest (docker-gvisor,
# podman-gvisor), the tools suite in e2e-gvisor (make test-extended).
GVISOR_MATRIX := ^TestMatrixNoShell$$
integration-gvisor: $(IMAGE)
	LITTERBOX_TEST_ISOLATION=gvisor scripts/timed.sh $@ $(INTEGRATION) -run '$(GVISOR_MATRIX)|$(ATTACKS)' ./internal/sandbox

E2E = LITTERBOX=$(CURDIR)/$(BIN) $(BATS) --timing e2e
e2e: build image
	$(E2E)

# Each check is a target of its own so that make -j (make check) runs them
# side by side; make test runs them one after another.
LINTS := lint-fmt lint-vet lint-darwin lint-staticcheck lint-procstart lint-imports lint-tests lint-shell
lint: $(LINTS)

lint-fmt:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt wants to rewrite: $$unformatted"; exit 1; fi

# With -tags integration: every file, the integration tests' too (none is
# built only without the tag).
lint-vet:
	$(GO) vet -tags integration ./...

# The CLI runs on macOS hosts too.
lint-darwin:
	GOOS=darwin $(GO) build ./...

lint-staticcheck:
	$(GO) run $(STATICCHECK) -tags integration ./...

# Only runner/ starts processes in the binary (both GOOS it ships for).
lint-procstart:
	@f=$$(mktemp) && for os in linux darwin; do GOOS=$$os $(GO) list -deps -json=ImportPath,Dir,GoFiles,CgoFiles,Standard,Module ./cmd/litterbox >>$$f || { rm -f $$f; exit 1; }; done; \
	  $(GO) run ./internal/lint/procstart <$$f; rc=$$?; rm -f $$f; exit $$rc

# Only internal/engine chooses a provider: the core speaks to internal/box.
lint-imports:
	@bad=$$($(GO) list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... | grep -E ' github.com/litterbox-dev/litterbox/(dockercli|kubecli)( |$$)' | \
	  grep -vE '^github.com/litterbox-dev/litterbox/(cmd/litterbox|internal/engine|dockercli|kubecli):' | cut -d: -f1); \
	  if [ -n "$$bad" ]; then echo "only internal/engine may import dockercli or kubecli; these do: $$bad"; exit 1; fi

# Every test in a file built only with the integration tag is named so
# that integration-rest's -run (INTEGRATION_TESTS) picks it, or is the
# package's TestMain.
lint-tests:
	@bad=$$(grep -rl --include='*_test.go' '^//go:build integration' . | xargs grep -HE '^func Test' | grep -vE ':func ($(INTEGRATION_TESTS:^%=%)[A-Za-z0-9_]*|TestMain)\('); \
	  if [ -n "$$bad" ]; then echo "integration tests must be named Test{Integration,Matrix,Contract}..., or integration-rest skips them: $$bad"; exit 1; fi

# Without shellcheck the shell scripts would go unchecked and the target
# still pass: it fails instead, naming the package.
lint-shell:
	@command -v shellcheck >/dev/null || { echo "lint-shell: shellcheck is not installed; install it (apt-get install shellcheck, brew install shellcheck) and run again"; exit 1; }
	@shellcheck scripts/*.sh scripts/k8s/*.sh .ci/run && shellcheck -s sh internal/services/*.sh && (cd e2e && shellcheck -x *.bats helpers.bash)

# A local busybox:latest for tests (built from Debian's busybox-static when no
# registry answers), in docker and, when installed, podman (the integration
# contract suite runs on both); never replaces an image that is already there.
# Plus the image matrix's Debian and no-shell images, in $(RUNTIME) only.
image: test-images
	scripts/busybox-image.sh $(RUNTIME)
	@if [ "$(RUNTIME)" != podman ] && command -v podman >/dev/null; then scripts/busybox-image.sh podman; fi

# litterbox-test/debian:bookworm, litterbox-test/python:bookworm (debootstrap,
# needs root or sudo) and litterbox-test/noshell:latest; each kept when present.
test-images:
	scripts/test-images.sh $(RUNTIME)

# Litterbox next to the raw docker commands it is made of; writes BENCHMARKS.md.
bench: image
	scripts/k8s/with-cluster.sh scripts/bench.sh

# The benchmarks of the everyday calls once each, beside their raw floors,
# to prove they run (make test); no figures written. make bench runs them
# all, the large trees' too, and measures.
BENCH_SMOKE = $(SIDE_BY_SIDE) scripts/bench.sh --smoke
bench-smoke: image
	scripts/timed.sh $@ env $(BENCH_SMOKE)

# Release archives in dist/: static builds for Linux and macOS on amd64 and
# arm64, each of litterbox and the helper it copies into sandboxes: on
# Linux litterbox-helper, on macOS its Linux build litterbox-helper-linux-
# <arch> (Docker Desktop runs Linux of the Mac's architecture). Each carries
# the README and docs/, which it links to.
# They are built from a clean work tree, with its commit stamped
# (-buildvcs=true): -trimpath leaves the build stamp out of a binary's
# record, so the commit is what shows that an archive's two programs match.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release:
	@[ -z "$$(git status --porcelain)" ] || { echo "make release builds from a clean work tree: commit or stash your changes first" >&2; exit 1; }
	@rm -rf dist && mkdir -p dist
	@for p in $(PLATFORMS); do os=$${p%/*} arch=$${p#*/} d=dist/litterbox-$(VERSION)-$$os-$$arch; mkdir -p $$d; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=true -ldflags '$(LDFLAGS)' -o $$d/litterbox ./cmd/litterbox || exit 1; \
	  h=litterbox-helper; [ $$os = linux ] || h=litterbox-helper-linux-$$arch; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -buildvcs=true -ldflags '$(LDFLAGS)' -o $$d/$$h ./cmd/litterbox-helper || exit 1; \
	  cp -R README.md docs $$d/ && tar -C dist -czf $$d.tar.gz $${d#dist/} && rm -rf $$d && echo $$d.tar.gz; done

clean:
	rm -rf bin dist
