//go:build e2e

// Package e2e_test runs csv-cleaner's end-to-end scenarios on the local
// cluster of package cluster: kube-apiserver, etcd, kube-controller-manager,
// kwok with a fake node, and OLM's own olm operator.
package e2e_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	kc *cluster.Cluster
	// cleaner is csv-cleaner; one replica runs between specs.
	cleaner *cluster.Cleaner
)

// catalogName is the CatalogSource of the sample packages.
const catalogName = "e2e-samples"

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "csv-cleaner end-to-end suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter)))
	var err error
	kc, err = cluster.Start(ctx, "")
	Expect(err).NotTo(HaveOccurred())
	var pkgs []fixtures.Package
	for _, p := range packages {
		p.NodeName = kc.NodeName
		pkgs = append(pkgs, p)
	}
	_, err = kc.ServeCatalog(ctx, catalogName, pkgs...)
	Expect(err).NotTo(HaveOccurred())
	cleaner, err = kc.Cleaner(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(cleaner.Scale(ctx, 1)).To(Succeed())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if kc != nil {
		Expect(kc.Stop()).To(Succeed())
	}
})

// Each spec leaves one csv-cleaner replica running, whatever it did to them.
var _ = AfterEach(func(ctx SpecContext) {
	Expect(cleaner.Scale(ctx, 1)).To(Succeed())
})

// Print the end of every log the harness keeps when a spec fails.
var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || kc == nil {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(kc.LogDir, "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 20000 {
			b = b[len(b)-20000:]
		}
		GinkgoWriter.Printf("\n===== %s (last 20 kB) =====\n%s\n", filepath.Base(l), b)
	}
})
