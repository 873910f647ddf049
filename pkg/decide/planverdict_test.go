package decide

import (
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// TestJudgePlan: a plan's verdict from its owner's classified deletion.
func TestJudgePlan(t *testing.T) {
	base := PlanVerdictInput{Managed: true, Unmanaged: "nothing", Message: "uninstalling", NothingDeleted: ": nothing would be deleted", WhatIf: "if deleted now"}
	for _, tt := range []struct {
		name string
		edit func(*PlanVerdictInput)
		want PlanVerdict
	}{
		{"unmanaged", func(in *PlanVerdictInput) { in.Managed = false }, PlanVerdict{Verdict: VerdictUnmanaged, Message: "nothing", Done: true}},
		{"a reinstall lists what the uninstall would do", func(in *PlanVerdictInput) { in.SkipReason = cleanupv1alpha1.ReasonReinstall },
			PlanVerdict{Verdict: VerdictSkipped, Reason: cleanupv1alpha1.ReasonReinstall, Message: "uninstalling; the items are what the uninstall would do then"}},
		{"an upgrade deletes nothing", func(in *PlanVerdictInput) { in.SkipReason = cleanupv1alpha1.ReasonUpgrade },
			PlanVerdict{Verdict: VerdictSkipped, Reason: cleanupv1alpha1.ReasonUpgrade, Message: "uninstalling: nothing would be deleted", Done: true}},
		{"not being deleted", func(in *PlanVerdictInput) { in.Hypothetical = true }, PlanVerdict{Verdict: VerdictUninstall, Message: "if deleted now"}},
		{"being deleted", func(*PlanVerdictInput) {}, PlanVerdict{Verdict: VerdictUninstall, Message: "uninstalling"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			tt.edit(&in)
			if got := JudgePlan(in); got != tt.want {
				t.Errorf("JudgePlan = %+v, want %+v", got, tt.want)
			}
		})
	}
}
