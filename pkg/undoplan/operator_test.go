package undoplan

import (
	"strings"
	"testing"
)

// TestOperatorRunning: an undo restores nothing while a workload of the
// operator runs or is about to; one scaled to zero whose pods are gone does
// not run.
func TestOperatorRunning(t *testing.T) {
	zero, one := int32(0), int32(1)
	csv := func(w Workload) Workload {
		w.Deployment, w.Of = "ops/op", "CSV ops/op.v1.2.0"
		return w
	}
	ext := Workload{Deployment: "db/db-operator", Of: "ClusterExtension db", OLMv1: true, Replicas: &one}
	for _, tt := range []struct {
		name string
		ws   []Workload
		want []string // in the message; none: it does not run
	}{
		{name: "nothing installed"},
		{name: "scaled to zero, its pods gone", ws: []Workload{csv(Workload{Replicas: &zero})}},
		{name: "one replica", ws: []Workload{csv(Workload{Replicas: &one, Pods: 1})},
			want: []string{"Deployment ops/op of CSV ops/op.v1.2.0 has 1 replica", "kubectl scale deployment -n ops op --replicas=0", "nothing was restored", "--beside-operator"}},
		{name: "replicas not set: one", ws: []Workload{csv(Workload{})}, want: []string{"has 1 replica"}},
		{name: "scaled to zero, a pod not gone yet", ws: []Workload{csv(Workload{Replicas: &zero, Pods: 1})}, want: []string{"1 of its pods have not gone yet"}},
		{name: "being installed", ws: []Workload{csv(Workload{Absent: true})}, want: []string{"CSV ops/op.v1.2.0 is being installed"}},
		{name: "a ClusterExtension: operator-controller scales it back", ws: []Workload{ext},
			want: []string{"Deployment db/db-operator of ClusterExtension db has 1 replica", "cannot be stopped that way"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := OperatorRunning(tt.ws)
			if len(tt.want) == 0 {
				if got != "" {
					t.Fatalf("OperatorRunning = %q, want it not running", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("OperatorRunning = %q, want it to say %q", got, w)
				}
			}
			if strings.Contains(got, "kubectl scale") && tt.ws[0].OLMv1 {
				t.Errorf("a ClusterExtension told to scale: %q", got)
			}
		})
	}
}
