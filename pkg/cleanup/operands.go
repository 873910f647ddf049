package cleanup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/finalizer"
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
	"github.com/csv-cleaner/csv-cleaner/pkg/revision"
)

// csv-cleaner holds no right on operands of its own: it lists, deletes and
// patches them with the rights of the ClusterRoles aggregated into
// rbac.OperandRole (OLM's per-CRD admin roles, an admin's roles labelled
// rbac.OperandGrantLabel). What limits their use further is the plan
// (provenance, targets, owners, creation time).

// operandPass is what one pass of the operand step found and did for one owned CRD.
type operandPass struct {
	// found counts the instances planned for deletion or already terminating.
	found int
	// remaining are those still there: terminating, or deleted and held by finalizers.
	remaining []metav1.PartialObjectMetadata
	// kept counts the instances left in place, by reason.
	kept map[string]int
	// keptRefs names the most specific of them (boundKept).
	keptRefs []cleanupv1alpha1.ObjectRef
	deleteResult
}

// deleteOperands plans and deletes one owned CRD's instances a page at a
// time, the next page listed while the last one's deletes run. The kind lists
// while it holds one of listing; each delete takes one of slots; an
// uninstall's kinds share both.
func (e *Engine) deleteOperands(ctx context.Context, s *decide.CRDScope, in decide.OperandInput, second *revision.Second, slots, listing chan struct{}) (operandPass, error) {
	pass := operandPass{kept: map[string]int{}}
	gvk := s.GVR.GroupVersion().WithKind(s.CRD.Spec.Names.Kind)
	planned := make(chan []metav1.PartialObjectMetadata)
	var listErr error
	go func() {
		defer close(planned)
		select {
		case listing <- struct{}{}:
			defer func() { <-listing }()
		case <-ctx.Done():
			listErr = ctx.Err()
			return
		}
		listErr = revision.Reader{Gatherer: e.gather()}.PlanInstances(ctx, second, s, in, func(decided decide.OperandPlan) error {
			for reason, n := range decided.Kept {
				pass.kept[reason] += n
			}
			pass.keptRefs = boundKept(append(pass.keptRefs, decided.KeptRefs...))
			pass.found += len(decided.Delete) + len(decided.Terminating)
			pass.remaining = append(pass.remaining, decided.Terminating...)
			pass.remaining = append(pass.remaining, withFinalizers(decided.Delete)...)
			select {
			case planned <- decided.Delete:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	res, err := e.deleteAll(ctx, s.GVR, gvk, planned, slots)
	for range planned { // the lister has stopped once the channel is closed
	}
	pass.deleteResult = res
	return pass, errors.Join(listErr, err)
}

// deleteResult is what deleteAll did.
type deleteResult struct {
	// deleted counts accepted delete requests.
	deleted int
	// refused are the objects the API server refused to delete (ClassifyRefusal).
	refused []refusal.Object
	// failed counts the objects without finalizers whose delete failed
	// otherwise: they remain (those with finalizers remain anyway).
	failed int
}

// deleteAll deletes the objects of pages, each with its UID as a
// precondition, holding one of slots while the API server has the request.
// Objects gone or replaced are skipped; refusals are collected, so that every
// other object is still deleted.
func (e *Engine) deleteAll(ctx context.Context, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, pages <-chan []metav1.PartialObjectMetadata, slots chan struct{}) (deleteResult, error) {
	jobs := make(chan *metav1.PartialObjectMetadata)
	var (
		mu   sync.Mutex
		res  deleteResult
		errs []error
		wg   sync.WaitGroup
	)
	inSlots := withSlots(ctx, slots)
	for range 4 * max(1, e.DeleteWorkers) { // spare workers keep the slots busy while some requests wait to be retried
		wg.Go(func() {
			for obj := range jobs {
				err := e.deleteOne(inSlots, gvr, gvk, obj)
				mu.Lock()
				why, refused := refusal.Classify(err)
				switch {
				case err == nil:
					res.deleted++
				case apierrors.IsNotFound(err), apierrors.IsConflict(err):
				case refused:
					res.refused = append(res.refused, refusal.Object{Obj: *obj, Refusal: why})
				default:
					if len(obj.Finalizers) == 0 {
						res.failed++
					}
					errs = append(errs, fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, obj.Namespace, obj.Name, err))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for page := range pages {
		for i := range page {
			select {
			case jobs <- &page[i]:
			case <-ctx.Done():
				break feed // stopping (SIGTERM): the next run resumes from the cluster's state
			}
		}
	}
	close(jobs)
	wg.Wait()
	operandsDeleted.Add(float64(res.deleted))
	return res, errors.Join(append(errs, ctx.Err())...)
}

// deleteOne deletes one object with its UID as a precondition. With a
// metadata client (Engine.Metadata) it names the resource directly and
// asks for the answer as protobuf metadata, which costs the API server less
// to encode than the whole object as JSON; else through the client.
func (e *Engine) deleteOne(ctx context.Context, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, obj *metav1.PartialObjectMetadata) error {
	uid := obj.UID
	if e.Metadata != nil {
		return Retry.Delete(ctx, func() error {
			return e.Metadata.Resource(gvr).Namespace(obj.Namespace).Delete(ctx, obj.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		})
	}
	// Unstructured, not PartialObjectMetadata: the API server answers a
	// delete of an object with finalizers with the object, which the
	// typed client cannot decode for a kind outside the scheme.
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gvk)
	target.SetNamespace(obj.Namespace)
	target.SetName(obj.Name)
	return e.Client.Delete(ctx, target, client.Preconditions{UID: &uid})
}

// stripFinalizers removes every finalizer of the given objects with
// finalizer.Patch. After a conflict it reads the object again and strips
// only the same object (its UID) while it is still being deleted: an object
// re-created under the same name is never touched. It returns the objects
// it stripped, with the finalizers they had.
func (e *Engine) stripFinalizers(ctx context.Context, gvk schema.GroupVersionKind, objs []metav1.PartialObjectMetadata) ([]metav1.PartialObjectMetadata, error) {
	var stripped []metav1.PartialObjectMetadata
	for i := range objs {
		obj := objs[i].DeepCopy()
		obj.SetGroupVersionKind(gvk)
		uid := obj.UID
		var had []string
		changed, err := finalizer.Patch(ctx, e.APIReader, e.Client, obj, func(cur *metav1.PartialObjectMetadata) []string {
			if cur.UID != uid || cur.DeletionTimestamp == nil || len(cur.Finalizers) == 0 {
				return nil
			}
			had = slices.Clone(cur.Finalizers)
			return []string{}
		})
		if err != nil {
			return stripped, fmt.Errorf("removing the finalizers of %s %s/%s: %w", gvk.Kind, obj.Namespace, obj.Name, err)
		}
		if changed {
			done := objs[i]
			done.Finalizers = had
			stripped = append(stripped, done)
		}
	}
	return stripped, nil
}

// Refs names objects for the record's blocking list.
func Refs(kind string, objs []metav1.PartialObjectMetadata, reason string) []cleanupv1alpha1.ObjectRef {
	out := make([]cleanupv1alpha1.ObjectRef, 0, len(objs))
	for _, o := range objs {
		out = append(out, cleanupv1alpha1.ObjectRef{Kind: kind, Namespace: o.Namespace, Name: o.Name, Finalizers: o.Finalizers, Reason: reason})
	}
	return out
}

// withFinalizers are the objects that carry a finalizer.
func withFinalizers(objs []metav1.PartialObjectMetadata) []metav1.PartialObjectMetadata {
	var out []metav1.PartialObjectMetadata
	for _, o := range objs {
		if len(o.Finalizers) > 0 {
			out = append(out, o)
		}
	}
	return out
}
