package main

import (
	"context"
	"errors"
	"fmt"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var cache = fixtures.CRD{Group: "cache.example.com", Kind: "Cache", Plural: "caches"}

// extension is an operator installed by OLM v1, as its Helm applier leaves it.
var extension = fixtures.Extension{Name: "cache-operator", Namespace: "cache-system", CRDs: []fixtures.CRD{cache},
	Labels: map[string]string{"demo.csv-cleaner.io/uninstall": "true"}}

// runExtension shows the second owner: a ClusterExtension deleted with the
// garbage collector on, under a policy that keeps its CRDs (crds: Orphan).
// Its custom resources go first, through the operator, then csv-cleaner
// detaches the CRD and releases the extension; the garbage collector
// removes the rest (the operator's Deployment, its RBAC) and leaves the CRD.
func runExtension(ctx context.Context, c client.Client) error {
	step("OLM v1: a CleanupPolicy that selects ClusterExtensions by label, crds: Orphan")
	policy := &cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "olmv1"}, Spec: cleanupv1alpha1.CleanupPolicySpec{
		ClusterExtensionSelector: &metav1.LabelSelector{MatchLabels: extension.Labels}, CRDs: cleanupv1alpha1.Orphan}}
	if err := c.Create(ctx, policy); err != nil {
		return err
	}

	step("Creating a ClusterExtension as OLM v1 makes it: %s, its CRD %s, the operator's Deployment and RBAC, each owned by the extension", extension.Name, cache.Name())
	made, err := extension.Create(ctx, c)
	if err != nil {
		return err
	}
	var objects []object
	for _, ns := range []string{"team-a", "team-d"} {
		if err := c.Create(ctx, fixtures.Namespace(ns)); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
		u := fixtures.Operand(cache, ns, "sessions")
		if err := c.Create(ctx, u); err != nil {
			return err
		}
		objects = append(objects, object{kind: "Cache", name: ns + "/sessions", deleted: true, why: "a custom resource of the extension's CRD: deleted first, while the operator runs", get: getter(u)})
	}
	objects = append(objects,
		object{kind: "CRD", name: cache.Name(), deleted: false, why: "crds: Orphan: detached from the extension, so the garbage collector keeps it", get: getter(made.CRDs[0])},
		object{kind: "Deployment", name: made.Deployment.Namespace + "/" + made.Deployment.Name, deleted: true, why: "the operator: the garbage collector deletes it once csv-cleaner releases the extension", get: getter(made.Deployment)},
		object{kind: "ClusterRole", name: made.Role.Name, deleted: true, why: "the operator's RBAC: the garbage collector's too", get: getter(made.Role)},
	)
	for _, o := range objects {
		fmt.Printf("    %-20s %s\n", o.kind, o.name)
	}
	key := client.ObjectKey{Name: extension.Name}
	if err := waitFor(ctx, "csv-cleaner's finalizer on the ClusterExtension", func(ctx context.Context) (bool, error) {
		ext := &ocv1.ClusterExtension{}
		err := c.Get(ctx, key, ext)
		return err == nil && contains(ext.Finalizers, decide.DefaultFinalizer), err
	}); err != nil {
		return err
	}
	fmt.Printf("    The ClusterExtension carries %s.\n", decide.DefaultFinalizer)

	step("Deleting the ClusterExtension (kube-controller-manager's garbage collector runs)")
	if err := c.Delete(ctx, made.Extension); err != nil {
		return err
	}
	rec := &cleanupv1alpha1.ExtensionCleanup{}
	if err := followRecord(ctx, c, key, rec, "extensioncleanup", func() (cleanupv1alpha1.Phase, int32, string) {
		return rec.Status.Phase, rec.Status.Remaining, rec.Status.Message
	}); err != nil {
		return err
	}
	for _, o := range objects[:2] {
		if err := o.get(ctx, c); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the custom resource %s must be gone when the record says Completed: %w", o.name, err)
		}
	}
	if err := objects[len(objects)-2].get(ctx, c); err != nil {
		return fmt.Errorf("the operator's Deployment must outlive its custom resources: %w", err)
	}
	fmt.Println("    The custom resources are gone while the operator's Deployment still exists: they went first.")
	// operator-controller does not run here: its own two finalizers (which
	// only free its caches) go as it would remove them.
	ext := &ocv1.ClusterExtension{}
	if err := c.Get(ctx, key, ext); err != nil {
		return err
	}
	fmt.Printf("    csv-cleaner released the extension; its finalizers now: %v (operator-controller's, removed here as it would)\n", ext.Finalizers)
	patch := client.MergeFromWithOptions(ext.DeepCopy(), client.MergeFromWithOptimisticLock{})
	ext.Finalizers = nil
	if err := c.Patch(ctx, ext, patch); err != nil {
		return err
	}
	if err := waitFor(ctx, "the garbage collector to delete the extension and what it owned", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, &ocv1.ClusterExtension{})
		if !apierrors.IsNotFound(err) {
			return false, client.IgnoreNotFound(err)
		}
		err = objects[len(objects)-2].get(ctx, c) // the Deployment
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	fmt.Println("    The ClusterExtension is gone, and the garbage collector removed what it owned but the CRD.")
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: cache.Name()}, crd); err != nil {
		return fmt.Errorf("the CRD must stay (crds: Orphan): %w", err)
	}
	if len(crd.OwnerReferences) > 0 {
		return errors.New("the CRD still has an ownerReference: it was not detached")
	}
	fmt.Printf("    CRD %s stays, with no ownerReference: detached.\n", crd.Name)
	return reportObjects(ctx, c, objects)
}
