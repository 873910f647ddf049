package olmv1

import (
	"testing"

	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func selfExt(name, ns, pkg string) ocv1.ClusterExtension {
	return ocv1.ClusterExtension{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: ocv1.ClusterExtensionSpec{Namespace: ns, Source: ocv1.SourceConfig{
			SourceType: ocv1.SourceTypeCatalog, Catalog: &ocv1.CatalogFilter{PackageName: pkg}}},
	}
}

func TestFindSelfExtension(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		exts      []ocv1.ClusterExtension
		want      string // "" for none
		wantErr   bool
	}{
		{name: "not in a pod", namespace: "", exts: []ocv1.ClusterExtension{selfExt("cc", "", SelfPackage)}},
		{name: "no extension", namespace: "csv-cleaner"},
		{name: "its own", namespace: "csv-cleaner", exts: []ocv1.ClusterExtension{
			selfExt("argocd", "csv-cleaner", "argocd-operator"), selfExt("cleaner", "csv-cleaner", SelfPackage), selfExt("other", "elsewhere", SelfPackage),
		}, want: "cleaner"},
		{name: "the package in another namespace only", namespace: "csv-cleaner", exts: []ocv1.ClusterExtension{selfExt("other", "elsewhere", SelfPackage)}},
		{name: "no catalog source", namespace: "csv-cleaner", exts: []ocv1.ClusterExtension{{
			ObjectMeta: metav1.ObjectMeta{Name: "odd"}, Spec: ocv1.ClusterExtensionSpec{Namespace: "csv-cleaner"}}}},
		{name: "two: none, and an error", namespace: "csv-cleaner", exts: []ocv1.ClusterExtension{
			selfExt("a", "csv-cleaner", SelfPackage), selfExt("b", "csv-cleaner", SelfPackage),
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindSelfExtension(tt.namespace, tt.exts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			name := ""
			if got != nil {
				name = got.Name
				if got.UID != types.UID("uid-"+name) {
					t.Errorf("UID = %s", got.UID)
				}
			}
			if name != tt.want {
				t.Errorf("self = %q, want %q", name, tt.want)
			}
		})
	}
}
