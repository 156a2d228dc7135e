# msgload. `make help` lists the targets.
GO      ?= go
BIN     ?= bin/msgload
SCENARIO ?= smoke
PKGS    ?= ./...
# CI sets CI=true, which makes the Prometheus and Chromium tests required instead of skipped.
TESTFLAGS ?= -count=1 -timeout 30m
# The commit the report names, for builds where Go stamps no VCS information
# (a git worktree, GOFLAGS=-buildvcs=false): git's, "+dirty" when modified.
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo +dirty)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/msgload
	$(GO) build -ldflags "-X main.buildCommit=$(COMMIT)" -o $(BIN) ./cmd/msgload

.PHONY: run
run: build ## run the built-in smoke scenario against the embedded simulator and sink; writes runs/<id>/
	./$(BIN) run $(SCENARIO)

.PHONY: test
test: ## run every test (Prometheus and Chromium tests skip when absent unless CI=true)
	$(GO) vet $(PKGS)
	$(GO) test $(TESTFLAGS) $(PKGS)

.PHONY: bench
bench: ## run the benchmarks quoted in README.md, one package after another (BENCH="sim sink" for some)
	GO=$(GO) ./scripts/bench.sh $(BENCH)

.PHONY: fuzz
fuzz: ## fuzz every parser of outside input for FUZZTIME each (default 20s)
	./scripts/fuzz.sh $(or $(FUZZTIME),20s)

.PHONY: lint
lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)

.PHONY: stack
stack: ## start Prometheus, Grafana (dashboards provisioned), a sim and a sink with Docker Compose (deploy/compose.yaml)
	docker compose -f deploy/compose.yaml up -d --build

.PHONY: clean
clean: ## remove bin/ and runs/
	rm -rf bin runs
