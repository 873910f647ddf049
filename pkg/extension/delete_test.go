package extension

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

func TestListable(t *testing.T) {
	now := metav1.Now()
	live := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "live"}}
	going := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now}}
	scopes := []plan.CRDScope{{Name: "live", CRD: live}, {Name: "going", CRD: going}}
	got := listable(scopes)
	if got[0].CRD != live || got[1].CRD != nil {
		t.Errorf("listable = %+v, want the live CRD kept and the deleting one counted as gone", got)
	}
	if scopes[1].CRD != going {
		t.Error("listable changed its input: the CRD step still needs the deleting CRD")
	}
}

func TestAboutToDo(t *testing.T) {
	scopes := []plan.CRDScope{{Name: "gadgets.example.com"}}
	for _, tt := range []struct {
		name    string
		targets plan.NamespaceSet
		s       plan.Settings
		want    []string
	}{
		{"defaults", plan.AllNamespaces(), plan.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Orphan},
			[]string{"deleting the custom resources in every namespace", "gadgets.example.com", "detaching them"}},
		{"a watch namespace, crds: Delete", plan.NewNamespaceSet([]string{"team-a"}), plan.Settings{Operands: cleanupv1alpha1.Delete, CRDs: cleanupv1alpha1.Delete},
			[]string{"in its watch namespace", "leaving them to the garbage collector"}},
		{"operands: Orphan", plan.AllNamespaces(), plan.Settings{Operands: cleanupv1alpha1.Orphan, CRDs: cleanupv1alpha1.Orphan},
			[]string{"keeping every custom resource (PolicyOrphan)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := aboutToDo(scopes, tt.targets, tt.s)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("aboutToDo = %q, want it to say %q", got, w)
				}
			}
		})
	}
}
