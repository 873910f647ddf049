package owninstall

import (
	"context"
	"math"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
)

// OperandBinding binds csv-cleaner's identity to its operand role at start
// (rbac.OperandBinder), retrying until it has: the role may not exist yet
// (OLM creates a bundle's objects in some order) and the API server may be
// away. Every replica does it, leader or not; the binding's name is the same
// for all of them.
type OperandBinding struct {
	Binder rbac.OperandBinder
	// Reviews asks who csv-cleaner is.
	Reviews client.Writer
	Log     logr.Logger
	// RetryCap caps the wait between two failed tries.
	RetryCap time.Duration
}

// NeedLeaderElection is false: a standby is ready with its rights when it takes over.
func (b OperandBinding) NeedLeaderElection() bool { return false }

// Start ensures the binding, then returns; it never fails the manager.
func (b OperandBinding) Start(ctx context.Context) error {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: b.RetryCap, Steps: math.MaxInt32}
	for {
		err := b.once(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		delay := backoff.Step()
		b.Log.Error(err, "Binding csv-cleaner to its operand ClusterRole failed; uninstalls that delete operands stay Blocked (Forbidden) until it succeeds",
			"clusterRole", b.Binder.Role, "retryIn", delay.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

func (b OperandBinding) once(ctx context.Context) error {
	subject, groups, err := rbac.Whoami(ctx, b.Reviews)
	if err != nil {
		return err
	}
	name, created, err := b.Binder.Ensure(ctx, subject, groups)
	if err != nil {
		return err
	}
	if created {
		b.Log.Info("Bound csv-cleaner to its operand ClusterRole", "clusterRole", b.Binder.Role, "clusterRoleBinding", name, "subject", subject.Kind+" "+subject.Namespace+"/"+subject.Name)
	}
	return nil
}
