package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/cleanup"
	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

// undoInstall is the install the undo's demo uninstalls and brings back.
var undoInstall = fixtures.Install{
	Namespace: "operators",
	CSVName:   "database-operator.v1.2.0",
	Targets:   []string{"team-a"},
	CRDs:      []fixtures.CRD{db},
}

// undoDatabases are the custom resources the uninstall deletes and the undo brings back.
var undoDatabases = []string{"orders", "billing"}

// env is what the demo runs on.
type env struct {
	cp     *controlplane.ControlPlane
	c      client.Client
	csi    *cluster.CSI
	velero *cluster.Velero
	binDir string
	// startVelero starts Velero, once what it backs up is installed.
	startVelero func() error
}

// runUndo is make demo-undo (--undo): on a local control plane, with
// csv-cleaner's CSI driver and its sidecars, Velero and an S3 server, an
// operator's uninstall under a CleanupPolicy with backup (every Database
// owns a Secret and a claim with known bytes), the data gone, csv-cleaner
// undo through an Undo object (before the operator is installed again),
// every byte back (sha256 before and after), each object linked to its
// restored owner again, then the operator installed again.
func runUndo(binDir string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, stop, err := startEnv(ctx, binDir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()

	before, err := e.installWithData(ctx)
	if err != nil {
		return err
	}
	if err := e.startVelero(); err != nil {
		return err
	}
	step("Starting bin/csv-cleaner as a separate process (logs: %s)", filepath.Join(e.cp.LogDir, "csv-cleaner.log"))
	proc, err := startCleaner(binDir, e.cp.Kubeconfig, e.cp.LogDir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopCleaner(proc)) }()
	if err := e.uninstall(ctx, before); err != nil {
		return err
	}
	step("Undoing the uninstall, before the operator is installed again: csv-cleaner undo --namespace %s %s", undoInstall.Namespace, undoInstall.CSVName)
	var out bytes.Buffer
	undo := exec.CommandContext(ctx, filepath.Join(binDir, "csv-cleaner"), "undo", "--kubeconfig="+e.cp.Kubeconfig, "--namespace", undoInstall.Namespace, undoInstall.CSVName)
	both := io.MultiWriter(os.Stdout, &out) // one writer: the child's stdout and stderr share a pipe, in order
	undo.Stdout, undo.Stderr = both, both
	if err := undo.Run(); err != nil {
		return fmt.Errorf("csv-cleaner undo: %w", err)
	}
	if err := throughUndo(out.String()); err != nil {
		return err
	}
	if err := e.check(ctx, before); err != nil {
		return err
	}
	return e.reinstall(ctx)
}

// throughUndo checks that csv-cleaner undo went through an Undo object that
// csv-cleaner in the cluster ran, as the demo shows, and did not fall back
// to undoing from here.
func throughUndo(out string) error {
	if strings.Contains(out, "Undoing from here") || !undoCreated.MatchString(out) {
		return fmt.Errorf("csv-cleaner undo did not go through an Undo object that csv-cleaner in the cluster ran (it printed %q)", out)
	}
	return nil
}

// undoCreated is what csv-cleaner undo says when it made an Undo for csv-cleaner in the cluster to run.
var undoCreated = regexp.MustCompile(`Undo \S+ created: csv-cleaner in the cluster runs it`)

// startEnv starts the control plane and the CSI stack; Velero waits for the undoInstall.
func startEnv(ctx context.Context, binDir string) (*env, func() error, error) {
	step("Starting a local control plane (etcd, kube-apiserver, kube-controller-manager) from %s", binDir)
	cp, err := controlplane.Start(controlplane.Options{BinDir: binDir, ControllerManager: true})
	if err != nil {
		return nil, nil, err
	}
	e := &env{cp: cp, binDir: binDir}
	stops := []func() error{cp.Stop}
	stop := func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		return errors.Join(errs...)
	}
	cl, err := cluster.Around(cp, binDir)
	if err == nil {
		e.c, err = client.New(cp.Config, client.Options{Scheme: cleanup.Scheme()})
	}
	if err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	step("Starting the CSI stack: csv-cleaner's test CSI driver, csi-provisioner, csi-snapshotter, snapshot-controller")
	if e.csi, err = cl.StartCSI(ctx); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	stops = append(stops, e.csi.Stop)
	e.startVelero = func() error {
		// After the operator's CRD: Velero reads the kinds the API server
		// serves when it starts, and again only every few minutes.
		step("Starting Velero (v1.18.3, CSI snapshots on) and its S3 server (versitygw), in namespace %s", cluster.VeleroNamespace)
		v, err := cl.StartVeleroCSI(ctx)
		if err != nil {
			return err
		}
		e.velero, stops = v, append(stops, v.Stop)
		return nil
	}
	return e, stop, nil
}
