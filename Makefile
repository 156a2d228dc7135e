# msgload. `make help` lists the targets.
GO      ?= go
BIN     ?= bin/msgload
SCENARIO ?= smoke
# METRICS_ADDR: `make run`'s --metrics-addr. Unset, the default 127.0.0.1:9464, which
# falls back to a free port (said on stderr) when another process holds it; set, it is strict.
METRICS_ADDR ?=
PKGS    ?= ./...
# CI sets CI=true, which makes the Prometheus and Chromium tests required instead of skipped.
TESTFLAGS ?= -count=1 -timeout 30m
# install copies bin/msgload to $(PREFIX)/bin (PREFIX=$$HOME/.local needs no root).
PREFIX  ?= /usr/local
# --version names the commit and its date even where the toolchain stamps none
# (GOFLAGS=-buildvcs=false, a git worktree): passed with -X, empty outside git.
COMMIT      ?= $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c+dirty; })
COMMIT_DATE ?= $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS     ?= -X main.commit=$(COMMIT) -X main.commitDate=$(COMMIT_DATE)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/msgload
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/msgload

.PHONY: install
install: build ## copy bin/msgload to PREFIX/bin (default /usr/local; PREFIX=~/.local needs no root)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/msgload

.PHONY: run
run: build ## run the built-in smoke scenario against the embedded simulator and sink; writes runs/<id>/ (METRICS_ADDR=ADDR: /metrics there, strictly)
	./$(BIN) run $(SCENARIO) $(if $(METRICS_ADDR),--metrics-addr '$(METRICS_ADDR)')

.PHONY: test
test: lint ## run every test after the lint (Prometheus and Chromium tests skip when absent unless CI=true)
	$(GO) test $(TESTFLAGS) $(PKGS)

.PHONY: faults
faults: ## run only the fault suite (toxiproxy between attacker, simulator and sink; part of `test`)
	$(GO) test -count=1 -run Faults ./harness

.PHONY: bench
bench: ## run the benchmarks quoted in README.md, one package after another (BENCH="sim sink" for some)
	GO=$(GO) ./scripts/bench.sh $(BENCH)

.PHONY: fuzz
fuzz: ## fuzz every parser of outside input for FUZZTIME each (default 20s), minimizing at most FUZZMINIMIZETIME (2s)
	./scripts/fuzz.sh $(or $(FUZZTIME),20s) $(or $(FUZZMINIMIZETIME),2s)

# deadcode at a pinned version, run by `go run pkg@version`: CI needs no install
# step (the module proxy serves it). -test: a function only tests reach is not
# dead; one nothing reaches (no main, no test) fails the lint.
DEADCODE ?= golang.org/x/tools/cmd/deadcode@v0.52.0

.PHONY: lint
lint: ## gofmt, go vet and deadcode (no function that nothing calls)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)
	cd scripts/tracewaits && $(GO) vet .
	@out=$$($(GO) run $(DEADCODE) -test $(PKGS)) || exit 1; test -z "$$out" || { echo "$$out"; echo "deadcode: remove the functions above (nothing calls them)"; exit 1; }

.PHONY: stack
stack: ## start Prometheus, Grafana (dashboards provisioned), a sim and a sink with Docker Compose (deploy/compose.yaml)
	docker compose -f deploy/compose.yaml up -d --build

.PHONY: clean
clean: ## remove bin/ and runs/
	rm -rf bin runs
