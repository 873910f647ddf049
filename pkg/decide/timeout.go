package decide

import (
	"fmt"
	"time"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Timeout says whether an uninstall's operandTimeout has passed, and what onTimeout does then.
type Timeout struct {
	Passed    bool
	OnTimeout cleanupv1alpha1.TimeoutAction
	After     time.Duration
}

// TimeoutOf reads the policy's timeout for an uninstall whose deletion
// began at deletion, as of now.
func TimeoutOf(s Settings, deletion, now time.Time) Timeout {
	return Timeout{Passed: now.Sub(deletion) >= s.OperandTimeout, OnTimeout: s.OnTimeout, After: s.OperandTimeout}
}

// Then says, for a person, what the timeout does next to operands that wait.
func (t Timeout) Then() string {
	if t.Passed {
		return fmt.Sprintf("operandTimeout %s has passed and onTimeout %s keeps waiting", t.After, t.OnTimeout)
	}
	return fmt.Sprintf("onTimeout %s applies once operandTimeout %s has passed", t.OnTimeout, t.After)
}
