package envtest_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
)

// requestLog records, from csv-cleaner's own requests, when the write of
// an uninstall record saying its Backup is verified came back, and when
// each DELETE of a scenario's objects (their paths hold its id) was sent.
type requestLog struct {
	id string

	mu       sync.Mutex
	verified time.Time
	deletes  []sentAt
}

// sentAt is a request's path and when it was sent.
type sentAt struct {
	path string
	at   time.Time
}

// wrap is a rest.Config's WrapTransport that records into the log.
func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodDelete && strings.Contains(req.URL.Path, l.id) {
			l.mu.Lock()
			l.deletes = append(l.deletes, sentAt{path: req.URL.Path, at: time.Now()})
			l.mu.Unlock()
		}
		status := (req.Method == http.MethodPatch || req.Method == http.MethodPut) && strings.Contains(req.URL.Path, "/csvcleanups/") && strings.HasSuffix(req.URL.Path, "/status")
		var body []byte
		if status && req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := next.RoundTrip(req)
		if status && err == nil && resp.StatusCode < 300 && bytes.Contains(body, []byte(`"verified":true`)) {
			l.mu.Lock()
			if l.verified.IsZero() {
				l.verified = time.Now()
			}
			l.mu.Unlock()
		}
		return resp, err
	})
}

// order is when the verified record's write came back, and the DELETEs.
func (l *requestLog) order() (time.Time, []sentAt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.verified, append([]sentAt(nil), l.deletes...)
}

// orderSpecs are the specs of the gate's order seen from the requests
// themselves: they run in the backup gate's ordered container.
func orderSpecs() {
	It("sends no DELETE before the write of the record saying the Backup is verified has come back, as csv-cleaner's own requests show", func(ctx SpecContext) {
		s := newScenario("bkorder")
		s.createPolicy(ctx, backupTo("velero-order"))
		startFakeVelero(ctx, "velero-order", "Available")
		log := &requestLog{id: s.id}
		stopManager()
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(log.wrap)
		startManagerAs(cfg)
		DeferCleanup(func() {
			stopManager()
			startManager()
		})
		s.installWithOperand(ctx)
		s.operand(ctx, 0, s.ns("b"), "w2")
		s.uninstall(ctx)
		verified, deletes := log.order()
		Expect(verified).NotTo(BeZero(), "csv-cleaner wrote the record's verified Backup")
		var paths []string
		for _, d := range deletes {
			paths = append(paths, d.path)
			Expect(d.at.After(verified)).To(BeTrue(), "DELETE %s sent at %s, before the verified record's write came back at %s",
				d.path, d.at.Format(time.StampMicro), verified.Format(time.StampMicro))
		}
		Expect(paths).To(ContainElements(HaveSuffix("/widgets/w1"), HaveSuffix("/widgets/w2"), HaveSuffix("/clusterroles/"+s.id+"-role")))
		AddReportEntry("The gate's order", "verified written at "+verified.Format(time.StampMicro)+", first DELETE sent at "+deletes[0].at.Format(time.StampMicro))
	})
}
