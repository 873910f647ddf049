package decide

import (
	"fmt"
	"strings"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Problem is bad input that blocks an uninstall until someone fixes it.
type Problem struct {
	Reason  string
	Object  string
	Message string
}

func (p Problem) Error() string { return p.Message }

// JoinProblems reports several problems as one, under the first one's
// reason, naming every object.
func JoinProblems(ps []Problem) *Problem {
	if len(ps) == 1 {
		return &ps[0]
	}
	objs, msgs := make([]string, 0, len(ps)), make([]string, 0, len(ps))
	for _, p := range ps {
		objs = append(objs, p.Object)
		msgs = append(msgs, p.Message)
	}
	return &Problem{Reason: ps[0].Reason, Object: strings.Join(objs, ", "), Message: strings.Join(msgs, "; ")}
}

// AsError is the problem as an error; nil when there is none.
func AsError(p *Problem) error {
	if p == nil {
		return nil
	}
	return p
}

// OperatorDown blocks an uninstall whose operator's Deployment (key) is
// down for the reason state says ("is gone", "is being deleted", …): nobody
// removes the finalizers its operands wait on.
func OperatorDown(key, state string) *Problem {
	return &Problem{Reason: cleanupv1alpha1.BlockedOperatorUnavailable, Object: "Deployment " + key,
		Message: fmt.Sprintf("the operator's Deployment %s %s, so nobody removes them", key, state)}
}
