package decide

import cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"

// Verdicts of a plan (a dry run).
const (
	VerdictUninstall = "Uninstall"
	VerdictSkipped   = "Skipped"
	VerdictUnmanaged = "Unmanaged"
	VerdictBlocked   = "Blocked"
	// VerdictIncomplete: the plan could not read some kinds; nothing else blocks.
	VerdictIncomplete = "Incomplete"
)

// PlanVerdictInput is what JudgePlan reads of an owner's deletion, as its
// controller classified it.
type PlanVerdictInput struct {
	// Managed: a policy selects the owner; else Unmanaged says what
	// deleting it does.
	Managed   bool
	Unmanaged string
	// SkipReason and Message are the classification's; NothingDeleted is
	// added to the message of a skip that deletes nothing.
	SkipReason, Message, NothingDeleted string
	// Hypothetical: the owner is not being deleted; WhatIf says what
	// deleting it now would do.
	Hypothetical bool
	WhatIf       string
}

// PlanVerdict is a plan's verdict before it reads the items; Done: it
// lists nothing more.
type PlanVerdict struct {
	Verdict, Reason, Message string
	Done                     bool
}

// JudgePlan is the verdict of a plan of a CSV or of a ClusterExtension:
// Unmanaged, Skipped (a reinstall's plan still lists what the uninstall
// would do once the Subscription is deleted), or Uninstall.
func JudgePlan(in PlanVerdictInput) PlanVerdict {
	switch {
	case !in.Managed:
		return PlanVerdict{Verdict: VerdictUnmanaged, Message: in.Unmanaged, Done: true}
	case in.SkipReason == cleanupv1alpha1.ReasonReinstall:
		return PlanVerdict{Verdict: VerdictSkipped, Reason: in.SkipReason, Message: in.Message + "; the items are what the uninstall would do then"}
	case in.SkipReason != "":
		return PlanVerdict{Verdict: VerdictSkipped, Reason: in.SkipReason, Message: in.Message + in.NothingDeleted, Done: true}
	case in.Hypothetical:
		return PlanVerdict{Verdict: VerdictUninstall, Message: in.WhatIf}
	}
	return PlanVerdict{Verdict: VerdictUninstall, Message: in.Message}
}
