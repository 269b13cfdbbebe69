# slurmbench: `make demo` runs the main job on the project's test cluster,
# `make test` runs every test (starting the test cluster when it can).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BIN     := bin/slurmbench
# The release layout: one static binary per compute-node architecture side
# by side, and bin/slurmbench for this machine. run ships the one matching
# the profile's slurm.compute_arch into each run directory (launcher/login/arch).
ARCHES  := amd64 arm64
HOSTARCH := $(shell $(GO) env GOARCH)

.PHONY: build test test-unit vet fuzz demo cluster-up cluster-down bench clean

build: $(foreach a,$(ARCHES),bin/linux-$(a)/slurmbench) bin/licenses/gsm8k-LICENSE
	cp bin/linux-$(HOSTARCH)/slurmbench $(BIN).tmp && mv -f $(BIN).tmp $(BIN)

# Static, pure Go (CGO off): cross-building is GOARCH alone, and the same
# file runs on the login node and inside jobs.
bin/linux-%/slurmbench: FORCE
	CGO_ENABLED=0 GOOS=linux GOARCH=$* $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/slurmbench

# The GSM8K data built into the binary is MIT-licensed: its licence ships too.
bin/licenses/gsm8k-LICENSE: internal/gsm8kdata/LICENSE
	mkdir -p $(@D) && cp $< $@

FORCE:

vet:
	$(GO) vet ./...

# golangci-lint with .golangci.yml, at a pinned version built from the Go
# module proxy (go run caches the build: only the first run compiles it).
GOLANGCI_LINT_VERSION ?= v2.15.0
lint:
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

# The reference checkout some tests compare against (InferenceX's recipes,
# srtctl's recordings, the power aggregator): the directory beside the
# repository, which a lone clone lacks; those tests then skip, or fail under
# SLURMBENCH_REQUIRE_DATA=1 (CI). Only tests read it (internal/shareddata).
export SLURMBENCH_REFERENCE_DIR ?= $(abspath $(CURDIR)/../shared)

# Unit tests only: needs nothing but Go and the repo.
test-unit:
	$(GO) test -count=1 ./...

# Everything, with the test cluster (root) — what CI runs. aarch64
# emulation (qemu-user through binfmt_misc) lets the test nodes run the
# linux/arm64 driver; without it that one test skips.
test: build vet fuzz
	@scripts/qemu-arm64.sh || echo "make test: no aarch64 emulation here: TestArm64DriverUnderQemu will skip" >&2
	@scripts/chromium.sh || echo "make test: no headless Chromium here: the report's browser tests will skip" >&2
	scripts/with-cluster.sh $(GO) test -count=1 -timeout 60m -parallel $(TEST_PARALLEL) ./...

# The end-to-end tests wait on the test cluster, not the CPU: up to this
# many run at once (Slurm queues what does not fit on its nodes). Tests that
# need the cluster to themselves are not marked parallel and run first.
TEST_PARALLEL ?= 8

# Recipe and profile loading under random input, for a bounded number of
# executions each (the seeds also run in every plain `go test`). The budgets
# are counts, not durations: Go before 1.27 can fail a duration-bounded run
# with a bare "context deadline exceeded" when the deadline lands while a
# worker is mid-call (go.dev/issue/75804), and a count has no deadline to
# race. Each count is about ten seconds on the 2-core CI machine.
FUZZ_PARSE ?= 40000x
FUZZ_MIGRATE ?= 40000x
FUZZ_PROFILE ?= 6000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZ_PARSE) -fuzzminimizetime 500x ./launcher/inputs/recipe
	$(GO) test -run '^$$' -fuzz '^FuzzMigrate$$' -fuzztime $(FUZZ_MIGRATE) -fuzzminimizetime 500x ./launcher/inputs/recipe/migrate
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZ_PROFILE) -fuzzminimizetime 500x ./launcher/inputs/profile

cluster-up:
	bash testcluster/up.sh

cluster-down:
	bash testcluster/down.sh

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

# The main job on the embedded default: the test cluster + the mock engine.
# TRANSPORT=cli submits and follows it with sbatch/squeue/scontrol instead
# of slurmrestd (profiles/testcluster-cli.toml).
TRANSPORT ?= rest
demo: build
	SLURMBENCH_KEEP_CLUSTER=1 SLURMBENCH_DEMO_TRANSPORT=$(TRANSPORT) scripts/with-cluster.sh scripts/demo.sh

clean:
	rm -rf bin demo-out
