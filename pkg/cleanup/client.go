package cleanup

import (
	"sync"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/throttle"
)

// crdsAsProtobuf has controller-runtime's clients read and write CRDs as
// protobuf, as they do Kubernetes' own types: a list of every CRD decodes
// several times faster than from JSON (docs/performance.md).
var crdsAsProtobuf = sync.OnceFunc(func() { utilruntime.Must(apiutil.AddToProtobufScheme(apiextensionsv1.AddToScheme)) })

// Scheme knows the types csv-cleaner reads and writes: Kubernetes' own, CRDs, OLM's (v0 and v1) and its own.
func Scheme() *runtime.Scheme {
	crdsAsProtobuf()
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(s))
	utilruntime.Must(operatorsv1.AddToScheme(s))
	utilruntime.Must(cleanupv1alpha1.AddToScheme(s))
	utilruntime.Must(ocv1.AddToScheme(s))
	return s
}

// Defaults of csv-cleaner's client and an uninstall's delete concurrency, which the
// benchmarks (test/bench) measure; flags change them.
const (
	// DefaultQPS and DefaultBurst are the client's rate limit.
	DefaultQPS   = 1000
	DefaultBurst = 2000
	// DefaultDeleteWorkers is how many deletes one uninstall has in flight.
	DefaultDeleteWorkers = 16
)

// ClientConfig prepares the config of csv-cleaner's manager: its requests
// are counted while the API server has them (InstrumentClient), an
// uninstall's deletes hold its slots meanwhile (holdSlot), its background
// writes are paced by the API server's latency (pace.Transport), and its reads, discovery, the REST
// mapper's and the informers' lists included, are retried in place while
// the API server fails transiently (Retry.Transport), each try counted.
func ClientConfig(cfg *rest.Config) {
	cfg.Wrap(InstrumentClient) // innermost: it counts what the API server has
	cfg.Wrap(holdSlot)
	cfg.Wrap(throttle.Transport) // each try of a background write is paced (ensureManaged)
	cfg.Wrap(Retry.Transport)
}
