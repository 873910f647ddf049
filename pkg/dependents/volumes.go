package dependents

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// snapshotClassKind is external-snapshotter's VolumeSnapshotClass.
var snapshotClassKind = schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshotClassList"}

// Volumes decides what a backup must hold of each PersistentVolumeClaim
// among nodes (decide.DecideVolume), reading each claim, its volume and the
// VolumeSnapshotClasses live: by LIST where scan (what they were found
// among) counts few more objects of the kind than are wanted, by GET
// otherwise (byList). The claims and volumes carry their names in the
// result (a claim's VolumeName).
func (s Scanner) Volumes(ctx context.Context, scan *Scan, nodes []decide.Node, v *cleanupv1alpha1.VeleroBackup) ([]decide.Volume, error) {
	var claims []decide.Node
	for _, n := range nodes {
		if n.Group == "" && n.Resource == "persistentvolumeclaims" {
			claims = append(claims, n)
		}
	}
	if len(claims) == 0 {
		return nil, nil
	}
	classes, err := s.snapshotClasses(ctx)
	if err != nil {
		return nil, err
	}
	pvcs, err := s.readClaims(ctx, claims, counted(scan.Nodes, "persistentvolumeclaims"))
	if err != nil {
		return nil, err
	}
	var bound []string
	for _, pvc := range pvcs {
		if pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" {
			bound = append(bound, pvc.Spec.VolumeName)
		}
	}
	pvs, err := s.readVolumes(ctx, bound, counted(scan.Nodes, "persistentvolumes")[""])
	if err != nil {
		return nil, err
	}
	var out []decide.Volume
	for _, c := range claims {
		pvc, ok := pvcs[client.ObjectKey{Namespace: c.Namespace, Name: c.Name}]
		if !ok {
			continue // gone since the scan: nothing left to hold
		}
		in := decide.VolumeInput{Claim: c, Classes: classes, SnapshotVolumes: v.SnapshotVolumes, VolumeData: v.VolumeData}
		in.Claim.VolumeName = pvc.Spec.VolumeName
		in.Bound = pvc.Status.Phase == corev1.ClaimBound
		in.ClassAnnotation = pvc.Annotations[decide.SnapshotClassPVCAnnotation]
		in.MarkedByRestore = pvc.Annotations[decide.VeleroMustIncludeAnnotation] == "true"
		if pv, ok := pvs[client.ObjectKey{Name: pvc.Spec.VolumeName}]; ok && in.Bound && pvc.Spec.VolumeName != "" {
			in.VolumeFound = true
			if pv.Spec.CSI != nil {
				in.Driver = pv.Spec.CSI.Driver
			}
		}
		out = append(out, decide.DecideVolume(in))
	}
	return out, nil
}

// snapshotClasses are the cluster's VolumeSnapshotClasses; none where
// external-snapshotter's CRDs are not installed.
func (s Scanner) snapshotClasses(ctx context.Context) ([]decide.SnapshotClass, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(snapshotClassKind)
	if err := s.Reader.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing VolumeSnapshotClasses: %w", err)
	}
	out := make([]decide.SnapshotClass, 0, len(list.Items))
	for _, c := range list.Items {
		driver, _, _ := unstructured.NestedString(c.Object, "driver")
		_, labelled := c.GetLabels()[decide.SnapshotClassLabel]
		out = append(out, decide.SnapshotClass{Name: c.GetName(), Driver: driver, Labelled: labelled,
			Default: c.GetAnnotations()[decide.SnapshotClassDefaultAnnotation] == "true"})
	}
	return out, nil
}
