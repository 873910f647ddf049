package cleanup

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/throttle"
)

// Result label values of csv_cleaner_uninstalls_total.
const (
	resultCompleted = "completed"
	resultSkipped   = "skipped"
	resultBlocked   = "blocked"
)

var (
	uninstalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_uninstalls_total",
		Help: "Uninstalls by what was uninstalled (kind: ClusterServiceVersion or ClusterExtension) and result: completed; skipped, with the reason nothing was deleted; blocked, counted each time an uninstall becomes Blocked, with the reason.",
	}, []string{"kind", "result", "reason"})
	uninstallDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "csv_cleaner_uninstall_duration_seconds",
		Help:    "Time from a CSV's (or a ClusterExtension's) deletion to the release of its finalizer, for completed uninstalls, by kind.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600},
	}, []string{"kind"})
	operandsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "csv_cleaner_operand_deletes_total",
		Help: "Delete requests csv-cleaner issued for operands.",
	})
	recordUnwritable = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "csv_cleaner_record_unwritable_total",
		Help: "Uninstalls that went on without a CSVCleanup record because their namespace was terminating.",
	})
	progress = newProgressCollector()

	failedAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_failed_attempts_total",
		Help: "Attempts (reconciles) that failed with an error and are tried again after a backoff capped at 10 s, by controller and by the step that failed (read, classify, record, backup, consolePlugins, operands, clusterObjects, crds, release, manage).",
	}, []string{"controller", "step"})
	clientRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_client_retries_total",
		Help: "Requests retried in place after a transient failure (a 5xx, a timeout, a 429 beyond client-go's own waits, a reset or lost connection), by verb.",
	}, []string{"verb"})

	clientRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_client_requests_total",
		Help: "Requests csv-cleaner's client sent to the API server, by the API server's verb (get, list, watch, create, update, patch, delete, …) and resource (plural.group, with /subresource; empty for a non-resource path).",
	}, []string{"verb", "resource"})
	inflight       inflightCount
	clientInflight = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "csv_cleaner_client_requests_in_flight",
		Help: "Requests csv-cleaner's client has sent to the API server and not had answered yet (a watch counts until its response starts).",
	}, func() float64 { return float64(inflight.now.Load()) })
	// writePace is the pacer of the running controller's background writes (ReportPace).
	writePace         atomic.Pointer[throttle.Limiter]
	writePaceLimit    = paceGauge("csv_cleaner_write_pace_limit", "How many of its background writes (the finalizer and the RBAC hold on managed CSVs) csv-cleaner lets be in flight now: it follows the API server's latency, so that a first start on many CSVs crowds other clients out as little as the latency shows (0 with --pace-writes=false).", func(s throttle.Status) float64 { return float64(s.Limit) })
	writePaceLatency  = paceGauge("csv_cleaner_write_pace_latency_seconds", "The median latency of csv-cleaner's last window of background writes, which the pace compares with csv_cleaner_write_pace_baseline_seconds.", func(s throttle.Status) float64 { return s.Latency.Seconds() })
	writePaceBaseline = paceGauge("csv_cleaner_write_pace_baseline_seconds", "The latency of csv-cleaner's background writes on an unloaded API server: the lowest median of its last 30 windows, one in ten of them measured with one write in flight. While the last window's latency stays within twice it, the limit grows.", func(s throttle.Status) float64 { return s.Baseline.Seconds() })
	clientInflightMax = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "csv_cleaner_client_requests_in_flight_max",
		Help: "The most requests csv-cleaner's client has had in flight at once since it started: the peak load it put on the API server, which --delete-workers bounds.",
	}, func() float64 { return float64(inflight.max.Load()) })
)

func init() {
	metrics.Registry.MustRegister(uninstalls, uninstallDuration, operandsDeleted, recordUnwritable, progress, clientRequests, clientInflight, clientInflightMax,
		failedAttempts, clientRetries, writePaceLimit, writePaceLatency, writePaceBaseline)
}

// paceGauge reports one figure of the pacer's status; 0 when nothing is paced.
func paceGauge(name, help string, figure func(throttle.Status) float64) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
		if l := writePace.Load(); l != nil {
			return figure(l.Status())
		}
		return 0
	})
}

// inflightCount counts requests in flight and remembers the most there were.
type inflightCount struct{ now, max atomic.Int64 }

func (c *inflightCount) inc() {
	n := c.now.Add(1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
}

func (c *inflightCount) dec() { c.now.Add(-1) }

// InstrumentClient wraps the client's transport (rest.Config.Wrap) so that
// csv_cleaner_client_requests_in_flight reports the load csv-cleaner puts
// on the API server and csv_cleaner_client_requests_total counts its
// requests by the verb and resource the API server authorizes.
func InstrumentClient(rt http.RoundTripper) http.RoundTripper {
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		clientRequests.WithLabelValues(VerbAndResource(req)).Inc()
		inflight.inc()
		defer inflight.dec()
		return rt.RoundTrip(req)
	})
}

// VerbAndResource reads a request's verb and resource as the API server
// authorizes them ("other" and "" where it cannot).
func VerbAndResource(req *http.Request) (verb, resource string) {
	info, err := requestInfo.NewRequestInfo(req)
	if err != nil || info.Verb == "" {
		return "other", ""
	}
	return info.Verb, resourceOf(info)
}

// resourceOf names a request's resource as plural.group[/subresource]
// (plural alone for the core group), "" for a non-resource path.
func resourceOf(info *apirequest.RequestInfo) string {
	if !info.IsResourceRequest {
		return ""
	}
	r := info.Resource
	if info.APIGroup != "" {
		r += "." + info.APIGroup
	}
	if info.Subresource != "" {
		r += "/" + info.Subresource
	}
	return r
}

// requestInfo reads a request's verb as the API server does.
var requestInfo = &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// progressCollector reports the uninstalls under way as this replica last
// saw them: the objects each still has to delete, and since when each
// Blocked one has been blocked. It is filled by the reconciles of the
// leader; a new leader fills it again as it reconciles every deleting CSV.
type progressCollector struct {
	mu    sync.Mutex
	state map[types.NamespacedName]uninstallProgress

	remaining, blockedSince, blockedNow *prometheus.Desc
}

type uninstallProgress struct {
	remaining    int32
	blockedSince time.Time // zero unless Blocked
	reason       string
}

func newProgressCollector() *progressCollector {
	return &progressCollector{
		state: map[types.NamespacedName]uninstallProgress{},
		remaining: prometheus.NewDesc("csv_cleaner_uninstall_objects_remaining",
			"Objects (operands, cluster RBAC, webhooks, CRDs) an uninstall under way still has to see gone.",
			[]string{"namespace", "name"}, nil),
		blockedSince: prometheus.NewDesc("csv_cleaner_uninstall_blocked_since_timestamp_seconds",
			"When a Blocked uninstall became Blocked (its record's Blocked condition), as a Unix time.",
			[]string{"namespace", "name", "reason"}, nil),
		blockedNow: prometheus.NewDesc("csv_cleaner_uninstalls_blocked",
			"Uninstalls Blocked now.", nil, nil),
	}
}

// observe records an uninstall's status after a reconcile; a finished one is forgotten.
func (p *progressCollector) observe(key types.NamespacedName, st *cleanupv1alpha1.UninstallStatus) {
	if st.Phase == cleanupv1alpha1.PhaseCompleted || st.Phase == cleanupv1alpha1.PhaseSkipped {
		p.forget(key)
		return
	}
	u := uninstallProgress{remaining: st.Remaining}
	if st.Phase == cleanupv1alpha1.PhaseBlocked {
		u.reason = st.Reason
		u.blockedSince = time.Now()
		if c := meta.FindStatusCondition(st.Conditions, cleanupv1alpha1.ConditionBlocked); c != nil && !c.LastTransitionTime.IsZero() {
			u.blockedSince = c.LastTransitionTime.Time
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state[key] = u
}

// forget drops an uninstall that ended or whose CSV is gone.
func (p *progressCollector) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.state, key)
}

func (p *progressCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.remaining
	ch <- p.blockedSince
	ch <- p.blockedNow
}

func (p *progressCollector) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	blocked := 0
	for key, u := range p.state {
		ch <- prometheus.MustNewConstMetric(p.remaining, prometheus.GaugeValue, float64(u.remaining), key.Namespace, key.Name)
		if !u.blockedSince.IsZero() {
			blocked++
			ch <- prometheus.MustNewConstMetric(p.blockedSince, prometheus.GaugeValue,
				float64(u.blockedSince.Unix()), key.Namespace, key.Name, u.reason)
		}
	}
	ch <- prometheus.MustNewConstMetric(p.blockedNow, prometheus.GaugeValue, float64(blocked))
}

// ReportPace makes the pace gauges show l, the pacer of the running
// controller's background writes (nil: nothing is paced).
func ReportPace(l *throttle.Limiter) { writePace.Store(l) }
