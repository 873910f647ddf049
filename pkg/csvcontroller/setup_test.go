package csvcontroller

import (
	"maps"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/pkg/objects"
)

func TestTrimCSV(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name            string
		labels, annots  map[string]string
		wantAnnotations map[string]string
		wantCopied      bool
	}{{
		name:   "an operator's own CSV keeps no annotation",
		labels: map[string]string{"team": "a"},
		annots: map[string]string{
			"alm-examples": "[{...}]", "description": "long", "olm.operatorNamespace": "ops",
			"olm.operatorGroup": "og", "olm.targetNamespaces": "a,b", decide.OptOutAnnotation: "true",
		},
	}, {
		name:            "a copy is still told from its operator namespace annotation",
		annots:          map[string]string{"olm.operatorNamespace": "elsewhere", "containerImage": "quay.io/x"},
		wantAnnotations: map[string]string{"olm.operatorNamespace": "elsewhere"},
		wantCopied:      true,
	}, {
		name:   "a copy is still told from its label",
		labels: map[string]string{operatorsv1alpha1.CopiedLabelKey: "ops"},
		annots: map[string]string{"capabilities": "Basic Install"}, wantCopied: true,
	}, {
		name: "no annotations",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := objects.CSVMetadata()
			in.Namespace, in.Name, in.UID, in.Generation = "ops", "op.v1", "uid-1", 3
			in.Labels, in.Annotations = maps.Clone(tt.labels), maps.Clone(tt.annots)
			in.Finalizers, in.DeletionTimestamp = []string{"f"}, &now
			in.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "olm"}}
			out, err := TrimCSV(in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*metav1.PartialObjectMetadata)
			if got.ManagedFields != nil {
				t.Error("managedFields kept")
			}
			if !maps.Equal(got.Annotations, tt.wantAnnotations) {
				t.Errorf("annotations = %v, want %v", got.Annotations, tt.wantAnnotations)
			}
			if !maps.Equal(got.Labels, tt.labels) || got.Finalizers[0] != "f" || got.DeletionTimestamp == nil ||
				got.Generation != 3 || got.UID != "uid-1" || objects.Key(got).String() != "ops/op.v1" {
				t.Errorf("dropped metadata the cached decisions read: %+v", got.ObjectMeta)
			}
			if copied := operatorsv1alpha1.IsCopied(got); copied != tt.wantCopied {
				t.Errorf("IsCopied = %v after trimming, want %v", copied, tt.wantCopied)
			}
		})
	}
}

func TestTrimCSVPassesTombstonesThrough(t *testing.T) {
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ops/op.v1"}
	out, err := TrimCSV(tomb)
	if err != nil || out != tomb {
		t.Errorf("TrimCSV(tombstone) = %v, %v", out, err)
	}
}
