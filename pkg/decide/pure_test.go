package decide

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoClient keeps the package pure: it may import the standard
// library, the API types and apimachinery's types, never a client, a cache
// or anything else that could read or write the cluster.
func TestImportsNoClient(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"github.com/csv-cleaner/csv-cleaner/api/",
		"github.com/operator-framework/api/pkg/operators/",
		"github.com/operator-framework/operator-controller/api/v1",
		"k8s.io/apiextensions-apiserver/pkg/apis/",
		"k8s.io/apimachinery/pkg/apis/",
		"k8s.io/apimachinery/pkg/labels",
		"k8s.io/apimachinery/pkg/runtime/schema",
		"k8s.io/apimachinery/pkg/types",
		"k8s.io/apimachinery/pkg/util/validation",
	}
	for _, imp := range pkg.Imports {
		if !strings.Contains(imp, ".") { // the standard library
			continue
		}
		ok := false
		for _, prefix := range allowed {
			ok = ok || strings.HasPrefix(imp, prefix)
		}
		if !ok {
			t.Errorf("pkg/decide imports %s: a decision reads its inputs as arguments, never through a client", imp)
		}
	}
}
