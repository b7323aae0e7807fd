SHELL := /bin/bash
# kraftwatch — one entry point for building, testing and running.
#   make test      unit tests (-race), deploy/ checks, e2e tests against real Kafka and NATS
#   make demo      the sidecar end to end on a local Kafka (KEEP=1: left running until Ctrl-C)
#   make lint      gofmt, go vet, staticcheck
#   make fuzz      each fuzz target briefly
#   make fixtures  regenerate the real Kafka fixtures in testdata/
#   make bench     benchmarks (bench-metadata: 1M-partition load vs Kafka; bench-sidecar: latency)

GO            ?= go
KAFKA_VERSION ?= 4.3.1
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME      ?= 10s
LDFLAGS       ?= -s -w
export KAFKA_VERSION

.PHONY: all build test unit deploy e2e kafka lint fuzz fixtures bench bench-metadata bench-sidecar demo clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o bin/kraftwatch .

test: unit deploy e2e

# events/clients is a module of its own (the CloudEvents SDK, natscli, nats-py tests).
unit:
	$(GO) test -race -count=1 ./...
	cd events/clients && $(GO) test -count=1 ./...

# deploy/: the Helm chart rendered and validated (kubeconform, and against the program),
# the sidecar examples, promtool on the alerts, the dashboard's PromQL. Its own module
# (deploy/test); Helm, kubeconform and promtool are built once into .cache/bin/.
deploy:
	cd deploy/test && $(GO) test -count=1 -timeout 30m ./...

# e2e packages share one Kafka per package; -p 1 keeps one cluster at a time on 2 cores.
# The KIP-1101 cases (TestDecisions, a Kafka Streams application's streams group
# included) and the kafka scheme's differential test against each release's own hashing
# code (hashcache TestKafkaDifferential; the unit run covers KAFKA_VERSION) also run on
# the first release with MetadataHash (4.1.1), the newest 4.2.x and the newest release;
# on the newest, so do the smoke test and the quorum smoke test (network and disk
# sources side by side): every release but those of E2E_DECISIONS_ONLY. The rebalanced
# cases (TestRebalanced: one event per epoch before 4.3, per assignment after; from 4.4
# TestRebalancedStaticStreams, a static streams member restarted) run on the releases
# of E2E_REBALANCED too.
E2E_EXTRA_VERSIONS ?= 4.1.1 4.2.2 4.4.0
E2E_DECISIONS_ONLY ?= 4.1.1 4.2.2
E2E_REBALANCED     ?= 4.1.1 4.4.0
e2e: kafka
	$(GO) test -tags e2e -race -count=1 -p 1 -timeout 40m -v ./e2e/...
	@for v in $(E2E_EXTRA_VERSIONS); do \
	  run='TestDecisions|TestSmoke|TestQuorumSmoke'; \
	  case " $(E2E_DECISIONS_ONLY) " in *" $$v "*) run=TestDecisions;; esac; \
	  case " $(E2E_REBALANCED) " in *" $$v "*) run="$$run|TestRebalanced";; esac; \
	  internal/kafkatest/fetch-kafka.sh $$v && \
	  KAFKA_VERSION=$$v $(GO) test -count=1 -run TestKafkaDifferential ./hashcache/ && \
	  KAFKA_VERSION=$$v $(GO) test -tags e2e -race -count=1 -timeout 20m -v -run "$$run" ./e2e/ || exit 1; \
	done

# Fetch Kafka's jars once into .cache/kafka/$(KAFKA_VERSION).
kafka:
	internal/kafkatest/fetch-kafka.sh $(KAFKA_VERSION)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...
	cd events/clients && $(GO) vet ./...
	cd deploy/test && $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags e2e ./e2e/...
	cd deploy/test && $(GO) run $(STATICCHECK) ./...

# -fuzzminimizetime keeps the time on fuzzing rather than on shrinking large seeds (real
# segments); each target prints its execs. A long run: make fuzz FUZZTIME=10m.
FUZZMINIMIZE  ?= 1s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    out=$$($(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg 2>&1) || { echo "$$out"; exit 1; }; \
	    echo "fuzz $$pkg $$f: $$(echo "$$out" | grep -o 'execs: [0-9]*' | tail -1), $$(echo "$$out" | grep -o 'new interesting: [0-9]*' | tail -1)"; \
	  done; \
	done

# Each release in FIXTURE_VERSIONS writes its own testdata/kafka-<version>/.
FIXTURE_VERSIONS ?= 4.1.1 4.3.1 4.4.0
fixtures:
	@for v in $(FIXTURE_VERSIONS); do \
	  internal/kafkatest/fetch-kafka.sh $$v && \
	  KAFKA_VERSION=$$v $(GO) test -tags fixtures -count=1 -v -timeout 20m -run TestGenerateFixtures ./internal/kafkatest/ || exit 1; \
	done

# kraftwatch end to end on a local two-broker Kafka with the embedded NATS server.
# KEEP=1 leaves it running after the scenario, printing where to look, until Ctrl-C.
# Built, not `go run`: go run exits 1 after an interrupt even when the demo exits 0,
# and make would then report an error for a Ctrl-C.
demo: build kafka
	$(GO) build -o bin/demo ./tools/demo
	bin/demo -kraftwatch bin/kraftwatch $(if $(KEEP),-keep)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Metadata append -> NATS subscriber latency over 100 real changes; 10k groups moved by one change.
bench-sidecar: kafka
	bench/sidecar.sh

# 1M-partition snapshot: kraftwatch's load against kafka-metadata-shell, in one run.
bench-metadata: kafka
	bench/metadata.sh

clean:
	rm -rf bin

# The container image; no image is published. Then: docker push $(IMAGE), and set the
# chart's image.repository and image.tag. Needs Docker (the tests check the Dockerfile
# statically only).
IMAGE ?= kraftwatch:local
.PHONY: image
image:
	docker build -t $(IMAGE) .
