package decide

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoClient keeps the package, its subpackage olmv1 and the
// undo's decisions (pkg/undoplan) pure:
// they may import the standard library, the API types, apimachinery's types
// and pkg/decide, never a client, a cache or anything else that could read
// or write the cluster.
func TestImportsNoClient(t *testing.T) {
	for _, dir := range []string{".", "olmv1", "../undoplan"} {
		importsNoClient(t, dir)
	}
}

func importsNoClient(t *testing.T, dir string) {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
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
		"k8s.io/api/core/v1",
		"github.com/csv-cleaner/csv-cleaner/pkg/decide",
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
			t.Errorf("%s (from pkg/decide) imports %s: a decision reads its inputs as arguments, never through a client", dir, imp)
		}
	}
}
