# csv-cleaner. Target names follow kubebuilder's scaffold.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(CURDIR)/bin
VERSION ?= 0.1.0
# The images csv-cleaner ships as (the bundle's CSV names IMG).
IMAGE_TAG_BASE ?= quay.io/csv-cleaner/csv-cleaner
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
# The catalog image for OLM v1 (catalog-olmv1/: the bundle by its image BUNDLE_IMG).
CATALOG_OLMV1_IMG ?= $(IMAGE_TAG_BASE)-catalog-olmv1:v$(VERSION)
PACKAGE := csv-cleaner
CHANNEL := stable

# Pinned tool versions, installed into bin/ through the Go module proxy.
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
KUSTOMIZE_VERSION ?= v5.8.0

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
KUSTOMIZE ?= $(LOCALBIN)/kustomize
OPM ?= $(LOCALBIN)/opm

# The control plane the tests and the demo run on (built from source, see hack/control-plane).
CONTROL_PLANE := $(LOCALBIN)/etcd $(LOCALBIN)/kube-apiserver $(LOCALBIN)/kube-controller-manager
# What the end-to-end tests' cluster adds: OLM, a catalog server and a fake node.
E2E_TOOLS := $(LOCALBIN)/olm $(LOCALBIN)/catalog $(LOCALBIN)/opm $(LOCALBIN)/kwok $(LOCALBIN)/catalogd $(LOCALBIN)/operator-controller
# What the benchmarks compare csv-cleaner with: kubectl-operator's uninstall and operator-sdk's cleanup.
BENCH_TOOLS := $(LOCALBIN)/kubectl-operator $(LOCALBIN)/operator-sdk
# Velero, its AWS plugin and an S3 gateway, for the backup gate's end-to-end test (issue 34), and
# the CSI stack whose snapshots hold the volumes' data (issue 42).
BACKUP_TOOLS := $(LOCALBIN)/velero $(LOCALBIN)/velero-plugin-for-aws $(LOCALBIN)/versitygw \
	$(LOCALBIN)/csi-provisioner $(LOCALBIN)/snapshot-controller $(LOCALBIN)/csi-snapshotter
export KUBEBUILDER_ASSETS ?= $(LOCALBIN)

# The commit and its date stamped into the binary (csv-cleaner version):
# the commit's date, not the build's, so that the same source builds the
# same binary.
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
GO_LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate the CRDs and RBAC into manifests/ from the markers in the code.
	$(CONTROLLER_GEN) rbac:roleName=csv-cleaner crd paths="./api/..." paths="./pkg/..." paths="./cmd/..." \
		output:crd:artifacts:config=manifests/crd output:rbac:artifacts:config=manifests/rbac

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet, including the e2e and bench build tags.
	go vet ./...
	go vet -tags e2e ./test/...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint: go vet's checks and more, no function over 80 lines in pkg/ and cmd/, and the import rules of docs/architecture.md (.golangci.yml's depguard rules: an arrow back up fails).
	$(GOLANGCI_LINT) run ./...

GENERATED := api manifests bundle bundle.Dockerfile catalog catalog-olmv1

.PHONY: verify-generated
verify-generated: controller-gen kustomize $(OPM) ## Fail when a generated file (code, manifests, bundle, catalog) is not what its sources generate.
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	cp -r $(GENERATED) $$tmp/; \
	$(MAKE) -s generate manifests bundle catalog catalog-olmv1 >/dev/null; \
	stale=0; for f in $(GENERATED); do diff -r $$tmp/$$f $$f >/dev/null || { stale=1; diff -r $$tmp/$$f $$f; }; done; \
	if [ $$stale = 1 ]; then echo "generated files were out of date and are now regenerated: review and commit them"; exit 1; fi

.PHONY: test
test: verify-generated vet lint control-plane e2e-tools bench-tools backup-tools ## Run the linters (the import rules too), the unit tests, the envtest suite, the end-to-end suite, make dist for this platform checked with krew's types, and make demo-undo.
	go test $$(go list ./... | grep -v /test/bench$$) -count=1 -timeout 30m
	# The small benchmark alone after them: go test runs two test binaries at
	# once on 2 cores, and the benchmark's control plane beside the envtest
	# suite's slowed both (its figures, and the suite's faulted specs).
	go test ./test/bench -count=1 -timeout 30m
	$(MAKE) --no-print-directory test-dist
	$(MAKE) --no-print-directory demo-undo
	$(MAKE) --no-print-directory test-e2e

# What make dist builds: every platform a release ships, into DIST_DIR.
PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64
DIST_DIR ?= $(CURDIR)/dist

.PHONY: dist
dist: ## Build the CLI's release into DIST_DIR: an archive per platform (PLATFORMS) with csv-cleaner and kubectl-csv_cleaner, checksums.txt and the krew plugin manifest csv-cleaner.yaml, the version, commit and date stamped in.
	go run ./hack/dist -version "$(VERSION)" -commit "$(COMMIT)" -date "$(DATE)" -platforms "$(PLATFORMS)" -out "$(DIST_DIR)"

.PHONY: demo-undo
demo-undo: build control-plane backup-tools ## Run the undo's round trip on a local control plane with csv-cleaner's CSI driver, Velero and an S3 server: an uninstall under a backup, the data gone, the reinstall, csv-cleaner undo, every byte back (about a minute once built).
	go run ./hack/demo --bin-dir $(LOCALBIN) --undo

.PHONY: test-dist
test-dist: ## Build make dist for this machine's platform and check it with krew's own types (hack/krew): the manifest, the archives and the checksums agree, and the binary prints its stamped version.
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(MAKE) --no-print-directory dist PLATFORMS=$$(go env GOOS)/$$(go env GOARCH) DIST_DIR=$$tmp; \
	cd hack/krew && DIST_DIR=$$tmp go test ./... -count=1; \
	tar -xzf $$tmp/csv-cleaner_$(VERSION)_$$(go env GOOS)_$$(go env GOARCH).tar.gz -C $$tmp kubectl-csv_cleaner; \
	$$tmp/kubectl-csv_cleaner version | grep -F "csv-cleaner $(VERSION) (commit $(COMMIT), built $(DATE),"

.PHONY: test-unit
test-unit: ## Run the pure and unit tests (pkg/decide's decisions, the API, the helpers, the drawing as the import rule) in seconds, without a control plane.
	go test ./api/... ./pkg/... ./cmd/... ./hack/... ./test/arch -count=1

.PHONY: test-e2e
test-e2e: e2e-tools backup-tools ## Run the end-to-end suite on the local cluster with real OLM and real Velero (or on E2E_KUBECONFIG's cluster).
	go test -tags e2e ./test/e2e/... -count=1 -timeout 30m

.PHONY: bench
bench: control-plane bench-tools backup-tools ## Measure csv-cleaner (throughput against the per-object floor, the backup gate with real Velero, the same behind a fault proxy, an outage of the API server, kubectl-operator side by side, a burst of uninstalls, a first start, resume, memory, idle cost) and write docs/benchmarks.{md,json,svg}.
	BENCH_SCALE=full BENCH_REPORT_DIR=$(CURDIR)/docs go test ./test/bench -run TestBench -count=1 -v -timeout 180m

.PHONY: control-plane
control-plane: $(CONTROL_PLANE) ## Build etcd, kube-apiserver and kube-controller-manager from source into bin/ (once).

$(CONTROL_PLANE): | hack/control-plane/build.sh
	@mkdir -p $(LOCALBIN)
	hack/control-plane/build.sh $(LOCALBIN) $(notdir $@)

.PHONY: e2e-tools
e2e-tools: control-plane $(E2E_TOOLS) ## Build OLM's olm and catalog operators (v0.46.0), opm (v1.74.0) and kwok (v0.8.0), and OLM v1 (catalogd and operator-controller v1.5.1) into bin/ for the end-to-end cluster (once).

$(E2E_TOOLS): | hack/control-plane/build.sh
	@mkdir -p $(LOCALBIN)
	hack/control-plane/build.sh $(LOCALBIN) $(notdir $@)

.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS) ## Build kubectl-operator (v0.6.0) and operator-sdk (v1.33.0) into bin/, which make bench runs side by side with csv-cleaner (once).

$(BENCH_TOOLS): | hack/control-plane/build.sh
	@mkdir -p $(LOCALBIN)
	hack/control-plane/build.sh $(LOCALBIN) $(notdir $@)

.PHONY: backup-tools
backup-tools: $(BACKUP_TOOLS) ## Build Velero (v1.18.3), its AWS plugin (v1.14.3), versitygw (v1.8.0), external-provisioner (v6.4.0) and external-snapshotter (v8.7.0) into bin/ (once), for the backup gate's end-to-end test and its benchmark.

$(BACKUP_TOOLS): | hack/control-plane/build.sh
	@mkdir -p $(LOCALBIN)
	hack/control-plane/build.sh $(LOCALBIN) $(notdir $@)

##@ Build

.PHONY: build
build: ## Build bin/csv-cleaner, and bin/kubectl-csv_cleaner beside it (the same binary, as kubectl finds a plugin: `kubectl csv-cleaner plan ...`).
	CGO_ENABLED=0 go build -trimpath -ldflags "$(GO_LDFLAGS)" -o $(LOCALBIN)/csv-cleaner ./cmd/csv-cleaner
	ln -sf csv-cleaner $(LOCALBIN)/kubectl-csv_cleaner

.PHONY: run
run: manifests ## Run csv-cleaner against the cluster of the current kubeconfig.
	go run ./cmd/csv-cleaner

.PHONY: demo
demo: build control-plane ## Show an uninstall surviving csv-cleaner scaled to zero, on a local control plane.
	go run ./hack/demo --bin-dir $(LOCALBIN)

.PHONY: docker-build
docker-build: ## Build the container image IMG (needs a Docker engine; test/image checks the same build without one).
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMG) .

##@ Deployment

.PHONY: deploy
deploy: manifests kustomize ## Install csv-cleaner without OLM into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build manifests/default | kubectl apply -f -

.PHONY: undeploy
undeploy: kustomize build ## Remove what deploy installed: stop csv-cleaner, remove every finalizer it placed (csv-cleaner release), then delete the rest (uninstall csv-cleaner's CSV through OLM instead when OLM installed it).
	kubectl delete deployment csv-cleaner --namespace=csv-cleaner --ignore-not-found --wait
	$(LOCALBIN)/csv-cleaner release
	$(KUSTOMIZE) build manifests/default | kubectl delete --ignore-not-found -f -

##@ OLM

.PHONY: bundle
bundle: manifests kustomize ## Generate the OLM bundle (bundle/, bundle.Dockerfile) from manifests/.
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	cp -r manifests $$tmp/; \
	(cd $$tmp/manifests/manager && $(KUSTOMIZE) edit set image controller=$(IMG)); \
	$(KUSTOMIZE) build $$tmp/manifests/olm | go run ./hack/bundle --version $(VERSION) --package $(PACKAGE) --channel $(CHANNEL)

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG (needs a Docker engine).
	docker build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: catalog
catalog: bundle $(OPM) ## Generate catalog/, the file-based catalog of package csv-cleaner, channel stable, with the bundle embedded; validate it with opm.
	rm -rf catalog && mkdir -p catalog/$(PACKAGE)
	$(OPM) init $(PACKAGE) --default-channel=$(CHANNEL) --description=manifests/olm/description.md --icon=manifests/olm/icon.svg --output=yaml > catalog/$(PACKAGE)/index.yaml
	printf -- '---\nschema: olm.channel\npackage: $(PACKAGE)\nname: $(CHANNEL)\nentries:\n- name: $(PACKAGE).v$(VERSION)\n' >> catalog/$(PACKAGE)/index.yaml
	@# A bundle directory renders with image "" and its manifests as olm.bundle.object
	@# properties: OLM reads the bundle from the catalog and pulls no bundle image.
	$(OPM) render bundle --output=yaml >> catalog/$(PACKAGE)/index.yaml
	$(OPM) validate catalog

.PHONY: catalog-build
catalog-build: catalog $(OPM) ## Build the catalog image CATALOG_IMG (needs a Docker engine).
	$(OPM) generate dockerfile catalog
	docker build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-olmv1
catalog-olmv1: catalog $(OPM) ## Generate catalog-olmv1/, catalog/ with the bundle named by its image BUNDLE_IMG, which OLM v1 pulls (it reads no manifests from a catalog); validate it with opm.
	rm -rf catalog-olmv1 && mkdir -p catalog-olmv1/$(PACKAGE)
	sed 's|^image: ""$$|image: $(BUNDLE_IMG)|' catalog/$(PACKAGE)/index.yaml > catalog-olmv1/$(PACKAGE)/index.yaml
	@grep -qx 'image: $(BUNDLE_IMG)' catalog-olmv1/$(PACKAGE)/index.yaml || { echo "catalog-olmv1: no bundle image was set" >&2; exit 1; }
	$(OPM) validate catalog-olmv1

.PHONY: catalog-olmv1-build
catalog-olmv1-build: catalog-olmv1 $(OPM) ## Build the OLM v1 catalog image CATALOG_OLMV1_IMG (needs a Docker engine; push BUNDLE_IMG too).
	$(OPM) generate dockerfile catalog-olmv1
	docker build -f catalog-olmv1.Dockerfile -t $(CATALOG_OLMV1_IMG) .

##@ Tools

.PHONY: kustomize
kustomize: $(KUSTOMIZE)
$(KUSTOMIZE):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT)
$(GOLANGCI_LINT):
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
