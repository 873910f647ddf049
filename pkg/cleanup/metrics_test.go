package cleanup

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func TestProgressCollector(t *testing.T) {
	since := time.Unix(1_700_000_000, 0)
	blockedStatus := &cleanupv1alpha1.UninstallStatus{
		Phase: cleanupv1alpha1.PhaseBlocked, Reason: "OperatorUnavailable", Remaining: 7,
		Conditions: []metav1.Condition{{Type: cleanupv1alpha1.ConditionBlocked, Status: metav1.ConditionTrue,
			Reason: "OperatorUnavailable", LastTransitionTime: metav1.NewTime(since)}},
	}
	a := types.NamespacedName{Namespace: "ns-a", Name: "a.v1"}
	b := types.NamespacedName{Namespace: "ns-b", Name: "b.v1"}

	tests := []struct {
		name string
		run  func(p *progressCollector)
		want string
	}{{
		name: "nothing under way",
		run:  func(*progressCollector) {},
		want: `
# HELP csv_cleaner_uninstalls_blocked Uninstalls Blocked now.
# TYPE csv_cleaner_uninstalls_blocked gauge
csv_cleaner_uninstalls_blocked 0
`,
	}, {
		name: "one deleting, one blocked since its condition's transition",
		run: func(p *progressCollector) {
			p.observe(a, &cleanupv1alpha1.UninstallStatus{Phase: cleanupv1alpha1.PhaseDeleting, Remaining: 3})
			p.observe(b, blockedStatus)
		},
		want: `
# HELP csv_cleaner_uninstall_blocked_since_timestamp_seconds When a Blocked uninstall became Blocked (its record's Blocked condition), as a Unix time.
# TYPE csv_cleaner_uninstall_blocked_since_timestamp_seconds gauge
csv_cleaner_uninstall_blocked_since_timestamp_seconds{name="b.v1",namespace="ns-b",reason="OperatorUnavailable"} 1.7e+09
# HELP csv_cleaner_uninstall_objects_remaining Objects (operands, cluster RBAC, webhooks, CRDs) an uninstall under way still has to see gone.
# TYPE csv_cleaner_uninstall_objects_remaining gauge
csv_cleaner_uninstall_objects_remaining{name="a.v1",namespace="ns-a"} 3
csv_cleaner_uninstall_objects_remaining{name="b.v1",namespace="ns-b"} 7
# HELP csv_cleaner_uninstalls_blocked Uninstalls Blocked now.
# TYPE csv_cleaner_uninstalls_blocked gauge
csv_cleaner_uninstalls_blocked 1
`,
	}, {
		name: "completed, skipped and vanished uninstalls are forgotten",
		run: func(p *progressCollector) {
			p.observe(a, blockedStatus)
			p.observe(b, blockedStatus)
			p.observe(a, &cleanupv1alpha1.UninstallStatus{Phase: cleanupv1alpha1.PhaseCompleted})
			p.forget(b)
			p.observe(b, &cleanupv1alpha1.UninstallStatus{Phase: cleanupv1alpha1.PhaseSkipped})
		},
		want: `
# HELP csv_cleaner_uninstalls_blocked Uninstalls Blocked now.
# TYPE csv_cleaner_uninstalls_blocked gauge
csv_cleaner_uninstalls_blocked 0
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProgressCollector()
			tt.run(p)
			if err := testutil.CollectAndCompare(p, strings.NewReader(tt.want)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestInflightCountKeepsThePeak(t *testing.T) {
	var c inflightCount
	const n = 16
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	for range n {
		done.Go(func() {
			c.inc()
			started.Done()
			release.Wait()
			c.dec()
		})
	}
	started.Wait()
	if got := c.now.Load(); got != n {
		t.Errorf("in flight = %d with %d requests outstanding", got, n)
	}
	release.Done()
	done.Wait()
	c.inc()
	c.dec()
	if now, peak := c.now.Load(), c.max.Load(); now != 0 || peak != n {
		t.Errorf("after all answered: in flight %d, max %d; want 0 and %d", now, peak, n)
	}
}

func TestVerbAndResource(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"DELETE", "/apis/example.com/v1/namespaces/a/widgets/w1", "widgets.example.com"},
		{"GET", "/api/v1/namespaces/a/secrets", "secrets"},
		{"PATCH", "/apis/operators.coreos.com/v1alpha1/namespaces/a/clusterserviceversions/x/status", "clusterserviceversions.operators.coreos.com/status"},
		{"GET", "/apis", ""},
		{"GET", "/healthz", ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, "https://127.0.0.1"+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := VerbAndResource(req); got != tt.want {
			t.Errorf("%s %s: resource %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}
