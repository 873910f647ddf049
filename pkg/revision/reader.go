package revision

import (
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/csv-cleaner/csv-cleaner/pkg/instances"
)

// Reader reads the cluster as it was at a revision, through the
// Gatherer's live reader.
type Reader struct{ instances.Gatherer }

// scheme knows the kinds whose deletions are searched for: CSVs and
// ClusterExtensions (a metadata-only subject names its own kind).
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(ocv1.AddToScheme(s))
	return s
}()
