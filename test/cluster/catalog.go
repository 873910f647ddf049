package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// ServeCatalog writes the packages as a file-based catalog and serves it
// (ServeCatalogDir).
func (c *Cluster) ServeCatalog(ctx context.Context, name string, pkgs ...fixtures.Package) (*operatorsv1alpha1.CatalogSource, error) {
	dir := filepath.Join(c.LogDir, "catalog-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the catalog folder: %w", err)
	}
	if err := fixtures.WriteCatalog(dir, pkgs...); err != nil {
		return nil, err
	}
	return c.ServeCatalogDir(ctx, name, dir, "csv-cleaner end-to-end samples")
}

// ServeCatalogDir serves the file-based catalog in dir with opm on this
// machine, and creates a global CatalogSource called name whose
// spec.address points at it, as OperatorHub lists it. It returns once OLM's
// catalog operator is connected to it.
func (c *Cluster) ServeCatalogDir(ctx context.Context, name, dir, displayName string) (*operatorsv1alpha1.CatalogSource, error) {
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	if _, err := c.startProcess("opm-"+name, filepath.Join(c.BinDir, "opm"), []string{
		"serve", dir, "--port=" + strconv.Itoa(port), "--pprof-addr=",
		"--termination-log=" + filepath.Join(c.LogDir, "opm-"+name+".termination.log"),
	}, nil); err != nil {
		return nil, err
	}
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.OLMNamespace},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType:  operatorsv1alpha1.SourceTypeGrpc,
			Address:     net.JoinHostPort(c.CatalogHost, strconv.Itoa(port)),
			DisplayName: displayName,
			Publisher:   "csv-cleaner",
		},
	}
	if err := c.Client.Create(ctx, cs); err != nil {
		return nil, fmt.Errorf("creating CatalogSource %s: %w", name, err)
	}
	if err := controlplane.WaitFor(ctx, 2*time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(cs), cs); err != nil {
			return false, err
		}
		st := cs.Status.GRPCConnectionState
		return st != nil && st.LastObservedState == "READY", nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for OLM to connect to catalog %s at %s (see opm-%s.log and catalog.log): %w",
			name, cs.Spec.Address, name, err)
	}
	return cs, nil
}
