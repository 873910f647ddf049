package envtest_test

import (
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var (
	backupGVK          = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Backup"}
	downloadRequestGVK = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "DownloadRequest"}
	storageLocationGVK = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "BackupStorageLocation"}
)

// veleroInstalled: Velero's CRDs are in the suite's control plane.
var veleroInstalled bool

// installVeleroCRDs installs Velero's CRDs (velero.io/v1) into the suite's
// control plane, as installing Velero does; they stay for the suite.
func installVeleroCRDs() {
	GinkgoHelper()
	if veleroInstalled {
		return
	}
	paths, err := controlplane.VeleroCRDs()
	Expect(err).NotTo(HaveOccurred())
	_, err = envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: paths})
	Expect(err).NotTo(HaveOccurred())
	veleroInstalled = true
}

// fakeVelero plays Velero's server in one namespace, driven by the spec:
// it takes each new Backup as Velero would (the objects of its
// includedResources in its includedNamespaces, every cluster-scoped one
// with includeClusterResources, and the CRD of each custom resource it
// holds), ends it in the phase the spec says, and answers each
// DownloadRequest of a BackupResourceList with a URL on 127.0.0.1 that
// serves the list gzipped, as Velero's object storage does.
type fakeVelero struct {
	namespace string
	server    *httptest.Server

	mu sync.Mutex
	// outcome is the phase a Backup ends in; "" holds it InProgress.
	outcome string
	// leaveOut is a "namespace/name" (or "name") the lists leave out.
	leaveOut string
	// snapshots is how the snapshot of each claim a Backup holds ends
	// (succeeded, failed; "" takes none).
	snapshots string
	lists     map[string]map[string][]string
	// copies are the objects each Backup took, whole, by resource (plural.group), namespace and name.
	copies map[string]map[string]*unstructured.Unstructured
	// restoreOutcome is the phase a Restore ends in; "" holds it InProgress.
	// A Restore made while the storage location is not Available ends
	// FailedValidation, as Velero's does, whatever it says.
	restoreOutcome string
	// restoreFailure is the failureReason of a Restore that ends Failed.
	restoreFailure string
	// backupErrors are the errors of the results of a Backup that ends
	// PartiallyFailed or Failed, as Velero's item errors read.
	backupErrors []string
	// downOnRestore and downOnBackup take the storage location down as the
	// next Restore, or Backup, is made, before Velero validates it.
	downOnRestore, downOnBackup bool
}

// startFakeVelero installs Velero's CRDs unless they are, and starts it in
// namespace, with a default BackupStorageLocation whose phase is location,
// until the spec ends.
func startFakeVelero(ctx context.Context, namespace, location string) *fakeVelero {
	GinkgoHelper()
	installVeleroCRDs()
	v := &fakeVelero{namespace: namespace, outcome: "Completed", snapshots: "succeeded", lists: map[string]map[string][]string{},
		copies: map[string]map[string]*unstructured.Unstructured{}, restoreOutcome: "Completed"}
	v.server = httptest.NewServer(http.HandlerFunc(v.serveList))
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, fixtures.Namespace(namespace)))).To(Succeed())
	bsl := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"provider": "aws", "default": true, "objectStorage": map[string]any{"bucket": "backups"}}}}
	bsl.SetGroupVersionKind(storageLocationGVK)
	bsl.SetNamespace(namespace)
	bsl.SetName("default")
	Expect(k8s.Create(ctx, bsl)).To(Succeed())
	v.setLocation(ctx, location)
	v.serverDeployment(ctx)
	run, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for run.Err() == nil {
			v.pass(run)
			select {
			case <-run.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	DeferCleanup(func() {
		stop()
		<-done
		v.server.Close()
	})
	return v
}

// setLocation sets the default BackupStorageLocation's phase.
func (v *fakeVelero) setLocation(ctx context.Context, phase string) {
	GinkgoHelper()
	Expect(v.locationTo(ctx, "default", phase)).To(Succeed())
}

// locationTo sets the phase of the BackupStorageLocation called name, as
// Velero's validation does.
func (v *fakeVelero) locationTo(ctx context.Context, name, phase string) error {
	bsl := &unstructured.Unstructured{}
	bsl.SetGroupVersionKind(storageLocationGVK)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: name}, bsl); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(bsl.Object, phase, "status", "phase"); err != nil {
		return err
	}
	return k8s.Update(ctx, bsl) // Velero's CRDs have no status subresource
}

// addLocation creates another BackupStorageLocation, not the default one,
// whose phase Velero's validation set to phase.
func (v *fakeVelero) addLocation(ctx context.Context, name, phase string) {
	GinkgoHelper()
	bsl := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"provider": "aws", "objectStorage": map[string]any{"bucket": name}}}}
	bsl.SetGroupVersionKind(storageLocationGVK)
	bsl.SetNamespace(v.namespace)
	bsl.SetName(name)
	Expect(k8s.Create(ctx, bsl)).To(Succeed())
	Expect(v.locationTo(ctx, name, phase)).To(Succeed())
}

// locationDownOnBackup takes the default storage location down as the
// next Backup is made, before Velero validates it: csv-cleaner saw it
// Available, and Velero refuses the Backup (FailedValidation).
func (v *fakeVelero) locationDownOnBackup() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.downOnBackup = true
}

// locationDownOnRestore takes the default storage location down as the
// next Restore is made, before Velero validates it: csv-cleaner saw it
// Available, and Velero refuses the Restore (FailedValidation).
func (v *fakeVelero) locationDownOnRestore() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.downOnRestore = true
}

// endIn makes the Backups end in phase from now on ("" holds them InProgress).
func (v *fakeVelero) endIn(phase string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.outcome = phase
}

// leave makes the resource lists leave out an object ("namespace/name").
func (v *fakeVelero) leave(object string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.leaveOut = object
}

// backups are the Backups in Velero's namespace.
func (v *fakeVelero) backups(ctx context.Context) []unstructured.Unstructured {
	GinkgoHelper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(backupGVK.GroupVersion().WithKind("BackupList"))
	Expect(k8s.List(ctx, list, client.InNamespace(v.namespace))).To(Succeed())
	return list.Items
}

// list is the resource list Velero made of the Backup called name.
func (v *fakeVelero) list(name string) map[string][]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lists[name]
}

// pass moves each Backup and DownloadRequest on, once.
func (v *fakeVelero) pass(ctx context.Context) {
	backups := &unstructured.UnstructuredList{}
	backups.SetGroupVersionKind(backupGVK.GroupVersion().WithKind("BackupList"))
	if err := k8s.List(ctx, backups, client.InNamespace(v.namespace)); err != nil {
		return
	}
	v.mu.Lock()
	outcome, leaveOut, down := v.outcome, v.leaveOut, v.downOnBackup
	v.mu.Unlock()
	for i := range backups.Items {
		b := &backups.Items[i]
		phase, _, _ := unstructured.NestedString(b.Object, "status", "phase")
		if phase == "" && down && v.locationTo(ctx, "default", "Unavailable") == nil {
			v.mu.Lock()
			v.downOnBackup, down = false, false
			v.mu.Unlock()
		}
		switch {
		case phase != "" && phase != "New" && phase != "InProgress":
			continue
		case phase == "" && !v.locationAvailable(ctx, b):
			// Velero validates the location before it backs up anything.
			location, _, _ := unstructured.NestedString(b.Object, "spec", "storageLocation")
			_ = unstructured.SetNestedField(b.Object, decide.BackupPhaseFailedValidation, "status", "phase")
			_ = unstructured.SetNestedStringSlice(b.Object, []string{fmt.Sprintf("backup can't be created because BackupStorageLocation %s is in Unavailable status.", cmp.Or(location, "default"))}, "status", "validationErrors")
			_ = k8s.Update(ctx, b)
			continue
		case outcome == "":
			if phase == "" {
				_ = unstructured.SetNestedField(b.Object, "InProgress", "status", "phase")
				_ = k8s.Update(ctx, b)
			}
			continue
		}
		list, items, copies := v.take(ctx, b, leaveOut)
		v.mu.Lock()
		v.lists[b.GetName()], v.copies[b.GetName()] = list, copies
		v.mu.Unlock()
		_ = unstructured.SetNestedField(b.Object, outcome, "status", "phase")
		if outcome == "PartiallyFailed" || outcome == "Failed" {
			v.mu.Lock()
			_ = unstructured.SetNestedField(b.Object, int64(len(v.backupErrors)), "status", "errors")
			v.mu.Unlock()
		}
		_ = unstructured.SetNestedField(b.Object, int64(items), "status", "progress", "itemsBackedUp")
		_ = unstructured.SetNestedField(b.Object, int64(items), "status", "progress", "totalItems")
		_ = k8s.Update(ctx, b)
	}
	v.restores(ctx)
	requests := &unstructured.UnstructuredList{}
	requests.SetGroupVersionKind(downloadRequestGVK.GroupVersion().WithKind("DownloadRequestList"))
	if err := k8s.List(ctx, requests, client.InNamespace(v.namespace)); err != nil {
		return
	}
	for i := range requests.Items {
		r := &requests.Items[i]
		if phase, _, _ := unstructured.NestedString(r.Object, "status", "phase"); phase != "" {
			continue
		}
		target, _, _ := unstructured.NestedString(r.Object, "spec", "target", "name")
		kind, _, _ := unstructured.NestedString(r.Object, "spec", "target", "kind")
		_ = unstructured.SetNestedField(r.Object, "Processed", "status", "phase")
		_ = unstructured.SetNestedField(r.Object, v.server.URL+"/"+kind+"/"+target, "status", "downloadURL")
		_ = unstructured.SetNestedField(r.Object, time.Now().Add(10*time.Minute).UTC().Format(time.RFC3339), "status", "expiration")
		_ = k8s.Update(ctx, r)
	}
}

// veleroPolicy is the part of Velero's resource policy the fake reads.
type veleroPolicy struct {
	IncludeExcludePolicy struct {
		IncludedClusterScopedResources   []string `json:"includedClusterScopedResources"`
		IncludedNamespaceScopedResources []string `json:"includedNamespaceScopedResources"`
		ExcludedClusterScopedResources   []string `json:"excludedClusterScopedResources"`
	} `json:"includeExcludePolicy"`
	NamespacedFilterPolicies []struct {
		Namespaces      []string       `json:"namespaces"`
		ResourceFilters []veleroFilter `json:"resourceFilters"`
	} `json:"namespacedFilterPolicies"`
	ClusterScopedFilterPolicy struct {
		ResourceFilters []veleroFilter `json:"resourceFilters"`
	} `json:"clusterScopedFilterPolicy"`
}

type veleroFilter struct {
	Kinds []string `json:"kinds"`
	Names []string `json:"names"`
}

// takes says whether filters take an object of resource called name; a
// kind they do not list is not taken (a namespace's entry is an allowlist).
func takes(filters []veleroFilter, resource, name string) bool {
	for _, f := range filters {
		if slices.Contains(f.Kinds, resource) {
			return len(f.Names) == 0 || slices.Contains(f.Names, name)
		}
	}
	return false
}

// take backs up what the Backup includes, as Velero does with a resource
// policy's fine-grained filters (the Backups csv-cleaner makes have one),
// into a resource list: every included namespaced resource in the
// included namespaces, as its namespace's entry (exact, else *) filters
// it; every included cluster-scoped one, by the names its filter lists;
// and the CRD of each custom resource it holds.
func (v *fakeVelero) take(ctx context.Context, b *unstructured.Unstructured, leaveOut string) (map[string][]string, int, map[string]*unstructured.Unstructured) {
	namespaces, _, _ := unstructured.NestedStringSlice(b.Object, "spec", "includedNamespaces")
	policyName, _, _ := unstructured.NestedString(b.Object, "spec", "resourcePolicy", "name")
	var p veleroPolicy
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: policyName}, cm); err != nil {
		return nil, 0, nil
	}
	if err := yaml.Unmarshal([]byte(cm.Data["policy"]), &p); err != nil {
		return nil, 0, nil
	}
	list, items, copies := map[string][]string{}, 0, map[string]*unstructured.Unstructured{}
	add := func(key, object string) {
		if object != leaveOut && !slices.Contains(list[key], object) {
			list[key] = append(list[key], object)
			items++
		}
	}
	keep := func(gvk schema.GroupVersionKind, r string, o metav1.PartialObjectMetadata) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if k8s.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, u) == nil {
			copies[r+"/"+o.Namespace+"/"+o.Name] = u
		}
	}
	entry := func(ns string) []veleroFilter {
		for _, pattern := range []string{ns, "*"} {
			for _, e := range p.NamespacedFilterPolicies {
				if slices.Contains(e.Namespaces, pattern) {
					return e.ResourceFilters
				}
			}
		}
		return nil
	}
	resources := slices.Concat(p.IncludeExcludePolicy.IncludedNamespaceScopedResources, p.IncludeExcludePolicy.IncludedClusterScopedResources)
	for _, r := range resources {
		plural, group, _ := strings.Cut(r, ".")
		gvk, err := k8s.RESTMapper().KindFor(schema.GroupVersionResource{Group: group, Resource: plural})
		if err != nil {
			continue
		}
		objects := &metav1.PartialObjectMetadataList{}
		objects.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(ctx, objects); err != nil {
			continue
		}
		key := gvk.GroupVersion().String() + "/" + gvk.Kind
		for _, o := range objects.Items {
			switch {
			case o.DeletionTimestamp != nil: // Velero skips what is being deleted
			case o.Namespace == "":
				if slices.Contains(p.IncludeExcludePolicy.IncludedClusterScopedResources, r) &&
					(!slices.ContainsFunc(p.ClusterScopedFilterPolicy.ResourceFilters, func(f veleroFilter) bool { return slices.Contains(f.Kinds, r) }) ||
						takes(p.ClusterScopedFilterPolicy.ResourceFilters, r, o.Name)) {
					add(key, o.Name)
					keep(gvk, r, o)
				}
			case !slices.Contains(namespaces, "*") && !slices.Contains(namespaces, o.Namespace):
			case takes(entry(o.Namespace), r, o.Name) || entry(o.Namespace) == nil && slices.Contains(p.IncludeExcludePolicy.IncludedNamespaceScopedResources, r):
				add(key, o.Namespace+"/"+o.Name)
				keep(gvk, r, o)
				if r == "persistentvolumeclaims" {
					v.takeVolume(p, copies["persistentvolumeclaims/"+o.Namespace+"/"+o.Name], add)
				}
				crds := "customresourcedefinitions.apiextensions.k8s.io"
				named := slices.ContainsFunc(p.ClusterScopedFilterPolicy.ResourceFilters, func(f veleroFilter) bool { return slices.Contains(f.Kinds, crds) })
				if group != "" && !strings.HasSuffix(group, ".k8s.io") && (!named || takes(p.ClusterScopedFilterPolicy.ResourceFilters, crds, r)) {
					add("apiextensions.k8s.io/v1/CustomResourceDefinition", r) // an additional item of the custom resource
				}
			}
		}
	}
	return list, items, copies
}

// restoreGVK is Velero's Restore.
var restoreGVK = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Restore"}

// endRestoresIn makes the Restores end in phase from now on ("" holds them InProgress).
func (v *fakeVelero) endRestoresIn(phase string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.restoreOutcome = phase
}

// failRestores makes the Restores end Failed from now on, with reason as
// their failureReason, as Velero's do when it cannot read the Backup.
func (v *fakeVelero) failRestores(reason string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.restoreOutcome, v.restoreFailure = "Failed", "restore execution failed: "+reason
}

// locationAvailable reports whether the storage location of o (a Backup,
// or a Restore's Backup) is Available, as Velero checks it first.
func (v *fakeVelero) locationAvailable(ctx context.Context, o *unstructured.Unstructured) bool {
	name, _, _ := unstructured.NestedString(o.Object, "spec", "storageLocation")
	bsl := &unstructured.Unstructured{}
	bsl.SetGroupVersionKind(storageLocationGVK)
	if k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: cmp.Or(name, "default")}, bsl) != nil {
		return false
	}
	phase, _, _ := unstructured.NestedString(bsl.Object, "status", "phase")
	return phase == "Available"
}

// restores moves each new Restore on, as Velero does: one made while the
// Backup's storage location is not Available ends FailedValidation; else,
// unless the spec holds it InProgress or fails it, it creates every object
// its resource policy names from the Backup's copy (without its UID,
// resourceVersion and ownerReferences, with Velero's two labels; one there
// already is left as it is), and ends Completed, or PartiallyFailed with
// the errors of the objects it could not create. A Restore of a custom
// resource at a version its CRD does not serve never ends (Velero v1.18.3
// waits on its informer's cache for good).
func (v *fakeVelero) restores(ctx context.Context) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(restoreGVK.GroupVersion().WithKind("RestoreList"))
	if err := k8s.List(ctx, list, client.InNamespace(v.namespace)); err != nil {
		return
	}
	v.mu.Lock()
	outcome, failure, down := v.restoreOutcome, v.restoreFailure, v.downOnRestore
	v.mu.Unlock()
	for i := range list.Items {
		r := &list.Items[i]
		phase, _, _ := unstructured.NestedString(r.Object, "status", "phase")
		if phase != "" && phase != "InProgress" {
			continue
		}
		if phase == "" && down {
			if v.locationTo(ctx, "default", "Unavailable") != nil {
				continue
			}
			v.mu.Lock()
			v.downOnRestore, down = false, false
			v.mu.Unlock()
		}
		backup, _, _ := unstructured.NestedString(r.Object, "spec", "backupName")
		b := &unstructured.Unstructured{}
		b.SetGroupVersionKind(backupGVK)
		switch {
		case phase == "" && (k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: backup}, b) != nil || !v.locationAvailable(ctx, b)):
			location, _, _ := unstructured.NestedString(b.Object, "spec", "storageLocation")
			v.endRestore(ctx, r, "FailedValidation", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(u.Object, []string{fmt.Sprintf("The BSL %s is unavailable, cannot retrieve the backup", cmp.Or(location, "default"))}, "status", "validationErrors")
			})
			continue
		case outcome == "":
			if phase == "" {
				_ = unstructured.SetNestedField(r.Object, "InProgress", "status", "phase")
				_ = k8s.Update(ctx, r)
			}
			continue
		case outcome == "Failed":
			v.endRestore(ctx, r, "Failed", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, failure, "status", "failureReason")
			})
			continue
		}
		v.restore(ctx, r, backup)
	}
}

// restore restores what the Restore r's resource policy names from the
// Backup's copy, and ends it (or, for a version not served, leaves it
// InProgress for good).
func (v *fakeVelero) restore(ctx context.Context, r *unstructured.Unstructured, backup string) {
	policyName, _, _ := unstructured.NestedString(r.Object, "spec", "resourcePolicy", "name")
	cm := &corev1.ConfigMap{}
	var p veleroPolicy
	if k8s.Get(ctx, client.ObjectKey{Namespace: v.namespace, Name: policyName}, cm) != nil || yaml.Unmarshal([]byte(cm.Data["policy"]), &p) != nil {
		return
	}
	v.mu.Lock()
	copies := v.copies[backup]
	v.mu.Unlock()
	var keys []string
	for _, e := range p.NamespacedFilterPolicies {
		for _, ns := range e.Namespaces {
			for _, f := range e.ResourceFilters {
				for _, kind := range f.Kinds {
					for _, name := range f.Names {
						keys = append(keys, kind+"/"+ns+"/"+name)
					}
				}
			}
		}
	}
	for _, f := range p.ClusterScopedFilterPolicy.ResourceFilters {
		for _, kind := range f.Kinds {
			for _, name := range f.Names {
				keys = append(keys, kind+"//"+name)
			}
		}
	}
	for _, key := range keys {
		if c, ok := copies[key]; ok && !servedNow(ctx, c) {
			if phase, _, _ := unstructured.NestedString(r.Object, "status", "phase"); phase == "" {
				_ = unstructured.SetNestedField(r.Object, "InProgress", "status", "phase")
				_ = k8s.Update(ctx, r)
			}
			return // waiting on the informer of a version nobody serves, for good
		}
	}
	restored, errs := int64(0), int64(0)
	v.mu.Lock()
	snapshotted := v.snapshots != ""
	v.mu.Unlock()
	for _, key := range keys {
		c, ok := copies[key]
		if !ok {
			continue
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		for k, val := range c.Object {
			if k != "status" && k != "metadata" {
				u.Object[k] = val
			}
		}
		u.SetAPIVersion(c.GetAPIVersion())
		u.SetKind(c.GetKind())
		u.SetNamespace(c.GetNamespace())
		u.SetName(c.GetName())
		u.SetAnnotations(c.GetAnnotations())
		if c.GetKind() == "PersistentVolumeClaim" && snapshotted {
			// As Velero v1.18.3's Restore leaves it on every claim it makes
			// from a CSI snapshot (docs/backup.md).
			notes := maps.Clone(c.GetAnnotations())
			if notes == nil {
				notes = map[string]string{}
			}
			notes[decide.VeleroMustIncludeAnnotation] = "true"
			u.SetAnnotations(notes)
		}
		labels := c.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["velero.io/backup-name"], labels["velero.io/restore-name"] = backup, r.GetName()
		u.SetLabels(labels)
		switch err := k8s.Create(ctx, u); {
		case err == nil:
			restored++
		case !apierrors.IsAlreadyExists(err):
			errs++ // Velero counts it, and goes on with the rest
		}
	}
	phase := "Completed"
	if errs > 0 {
		phase = "PartiallyFailed"
	}
	v.endRestore(ctx, r, phase, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, restored, "status", "progress", "itemsRestored")
		_ = unstructured.SetNestedField(u.Object, restored+errs, "status", "progress", "totalItems")
		_ = unstructured.SetNestedField(u.Object, errs, "status", "errors")
	})
}

// endRestore ends the Restore r in phase, with what set writes, and its
// completionTimestamp but after a failed validation (Velero writes none then).
func (v *fakeVelero) endRestore(ctx context.Context, r *unstructured.Unstructured, phase string, set func(*unstructured.Unstructured)) {
	_ = unstructured.SetNestedField(r.Object, phase, "status", "phase")
	if phase != "FailedValidation" {
		_ = unstructured.SetNestedField(r.Object, time.Now().UTC().Format(time.RFC3339), "status", "completionTimestamp")
	}
	set(r)
	_ = k8s.Update(ctx, r)
}

// servedNow reports whether the API server serves the object c's kind at
// its version (a custom resource's CRD may no longer serve it).
func servedNow(ctx context.Context, c *unstructured.Unstructured) bool {
	gvk := c.GroupVersionKind()
	if decide.BuiltInGroup(gvk.Group) {
		return true
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if k8s.List(ctx, crds) != nil {
		return true
	}
	for _, crd := range crds.Items {
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		return slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == gvk.Version && v.Served })
	}
	return false
}

// serveList serves a Backup's resource list, or its volumes' information
// (a CSI snapshot of each claim it holds, that ended as snapshots says), as
// Velero's object storage does: gzipped JSON, without a Content-Encoding.
func (v *fakeVelero) serveList(w http.ResponseWriter, r *http.Request) {
	kind, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	list := v.list(name)
	if list == nil {
		http.NotFound(w, r)
		return
	}
	var body any = list
	switch kind {
	case "BackupVolumeInfos":
		body = v.volumeInfos(name, list)
	case "BackupContents":
		v.serveContents(w, name, list)
		return
	case "BackupResults":
		body = v.results()
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	z := gzip.NewWriter(w)
	_ = json.NewEncoder(z).Encode(body)
	_ = z.Close()
}

// snapshotsEnd makes the volumes' snapshots of the Backups end in result
// (succeeded, failed; "" takes none) from now on.
func (v *fakeVelero) snapshotsEnd(result string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.snapshots = result
}
