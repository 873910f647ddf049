package decide

import cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"

// GateInput is what decides, before any operand is listed, whether the
// operands are decided one by one, kept whole, or not touched at all.
type GateInput struct {
	Verdict  Verdict
	Settings Settings
	// OperatorGroups is DecideOperatorGroups' problem, if any.
	OperatorGroups *Problem
	// Scope are ScopeCRDs' problems (a malformed or unestablished owned CRD).
	Scope []Problem
	// Targets is DecideTargets' problem, if any.
	Targets *Problem
}

// GateOperands decides, for the run and the plan alike, the reason every
// operand is kept or the problem that blocks the operand step, in the
// precedence docs/plan.md lists.
func GateOperands(in GateInput) (orphan string, blocked *Problem) {
	if in.OperatorGroups != nil {
		return "", in.OperatorGroups
	}
	if orphan := OrphanReason(in.Verdict, in.Settings); orphan != "" {
		return orphan, nil
	}
	if len(in.Scope) > 0 {
		return "", JoinProblems(in.Scope)
	}
	return "", in.Targets
}

// OrphanReason says why every operand is kept, or "" when they are decided one by one.
func OrphanReason(v Verdict, s Settings) string {
	switch {
	case v.OptedOut:
		return cleanupv1alpha1.KeepOptedOut
	case s.Operands == cleanupv1alpha1.Orphan:
		return cleanupv1alpha1.KeepPolicyOrphan
	}
	return ""
}
