package cleanup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/plan"
)

// acknowledger shows an uninstall the moment its CSV's deletion is seen:
// it creates the CSVCleanup record with phase Deleting, what the uninstall
// is about to do, and the CleanupStarted Event. It is a controller of its
// own, with its own queue and workers, so that a burst of uninstalls is
// acknowledged at once and not after the deletes of the uninstalls queued
// before it; the uninstall itself (Reconciler.reconcileDelete) finds the
// record started and goes on from there. It deletes nothing and writes
// nothing but the record and the Event: a deletion that is not an uninstall
// (plan.Classify) or a CSV no policy manages is left to the uninstall
// controller, which releases it at once.
type acknowledger struct{ r *Reconciler }

// AcknowledgeWorkers is how many deleting CSVs the acknowledger reads at once.
const AcknowledgeWorkers = 32

// deletionStarted lets through the CSV events that show a deletion: a CSV
// created or listed while being deleted, and the update that sets its
// deletionTimestamp.
var deletionStarted = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !e.Object.GetDeletionTimestamp().IsZero() },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero() && e.ObjectOld.GetDeletionTimestamp().IsZero()
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func (a acknowledger) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("uninstall-acknowledge").
		For(csvMetadata(), builder.WithPredicates(deletionStarted)).
		WithOptions(controller.Options{MaxConcurrentReconciles: AcknowledgeWorkers, RateLimiter: RateLimiter()}).
		Complete(a)
}

// Reconcile acknowledges one deleting CSV; anything it cannot do is the
// uninstall controller's, which does it too, so an error is only logged.
func (a acknowledger) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r := a.r
	cached := csvMetadata()
	if err := r.Client.Get(ctx, req.NamespacedName, cached); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cached.DeletionTimestamp.IsZero() || !r.Finalizers.HeldBy(cached.Finalizers) || r.isSelf(cached) {
		return reconcile.Result{}, nil
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("csv", klog.KObj(cached))
	ctx = logr.NewContext(ctx, log)
	if err := r.acknowledge(ctx, cached); err != nil {
		log.V(1).Info("Leaving the acknowledgement to the uninstall", "error", err.Error())
	}
	return reconcile.Result{}, nil
}

// acknowledge starts the record of a managed CSV's uninstall, unless it is
// started already, in as few requests as it can: the live list of the CSVs
// of its namespace holds the CSV itself and its siblings, the namespace is
// read from the cache, and the record is created before it is read.
func (r *Reconciler) acknowledge(ctx context.Context, cached client.Object) error {
	if fate, _, err := r.SelfFate(ctx); err != nil || fate == plan.SelfUninstalled {
		return err // csv-cleaner is going: it releases every CSV instead
	}
	g := r.gather()
	policy, err := g.Policy(ctx, cached)
	if err != nil || !plan.Managed(policy, cached) {
		return err
	}
	in, err := g.classifyListed(ctx, cached)
	if err != nil || in.CSV == nil {
		return err
	}
	csv := in.CSV
	if csv.DeletionTimestamp.IsZero() || !r.Finalizers.HeldBy(csv.Finalizers) {
		return nil
	}
	verdict := plan.Classify(in)
	if verdict.SkipReason != "" {
		return nil
	}
	rec, err := r.openRecordFrom(ctx, csv, true)
	if err != nil {
		return err
	}
	_, err = r.startRecord(ctx, csv, rec, plan.SettingsOf(policy), policy.Name, verdict, time.Now())
	return err
}

// startRecord writes the record at Deleting, with what the uninstall is
// about to do, when it has not started yet, and sends CleanupStarted once
// the write succeeds. The acknowledger and the uninstall both start it, at
// the same moment in a quiet cluster: the one whose write conflicts reads
// the record again and goes on from what the other wrote, so that neither
// fails nor sends the Event twice; they take turns (startTurns), and the
// second reads the record again rather than write the same start. It
// returns the record as it now is.
func (r *Reconciler) startRecord(ctx context.Context, csv *operatorsv1alpha1.ClusterServiceVersion, rec *record, s plan.Settings, policy string, v plan.Verdict, now time.Time) (*record, error) {
	log := logr.FromContextOrDiscard(ctx)
	if rec.st.StartTime != nil && rec.st.Policy == policy { // the usual case: started in an earlier pass
		if r.starts.confirm(csv.UID) {
			r.sendStarted(csv, policy, v, aboutToDo(csv, s, v))
		}
		return rec, nil
	}
	turn := r.starts.take(csv.UID)
	defer turn.Unlock()
	if turn.started && rec.st.StartTime == nil {
		var err error
		if rec, err = r.openRecord(ctx, csv); err != nil { // read before the other's write
			return rec, err
		}
	}
	for range 3 {
		if !rec.start(policy, metav1.NewTime(now)) {
			return rec, nil
		}
		about := aboutToDo(csv, s, v)
		log.Info("Starting the uninstall", "policy", policy, "reason", v.Message, "plan", about)
		rec.deleting("Uninstall started: " + about)
		err := r.save(ctx, rec)
		if err == nil {
			turn.started = true
			r.sendStarted(csv, policy, v, about)
			return rec, nil
		}
		// Nothing was done yet that the record must keep: the start is
		// written again, with its Event, by whoever comes next.
		r.pending.drop(csv.UID)
		if !apierrors.IsConflict(err) {
			turn.unsure = true // the write may have happened: see confirm
			return rec, err
		}
		log.V(1).Info("Reading the uninstall record again: it was written meanwhile")
		if rec, err = r.openRecord(ctx, csv); err != nil {
			return rec, err
		}
	}
	return rec, fmt.Errorf("starting the uninstall record of %s: it kept changing", csvKey(csv))
}

// sendStarted sends CleanupStarted, once the record's start is written.
func (r *Reconciler) sendStarted(csv *operatorsv1alpha1.ClusterServiceVersion, policy string, v plan.Verdict, about string) {
	r.event(csv, corev1.EventTypeNormal, "CleanupStarted", "Uninstall", "Uninstall started under CleanupPolicy %s: %s; %s", policy, v.Message, about)
}

// aboutToDo says, for a person, what an uninstall under the settings does:
// the operands of which kinds it deletes or keeps, and what becomes of the
// cluster RBAC, the webhooks and the CRDs.
func aboutToDo(csv *operatorsv1alpha1.ClusterServiceVersion, s plan.Settings, v plan.Verdict) string {
	var kinds []string
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		kinds = append(kinds, o.Name)
	}
	operands := "deleting the operands in its target namespaces"
	if orphan := plan.OrphanReason(v, s); orphan != "" {
		operands = "keeping every operand (" + orphan + ")"
	}
	what := fmt.Sprintf("%s of %d owned CRDs (%s)", operands, len(kinds), strings.Join(kinds, ", "))
	act := func(a cleanupv1alpha1.Action) string {
		if a == cleanupv1alpha1.Delete {
			return "deleting"
		}
		return "keeping"
	}
	return fmt.Sprintf("%s, then %s its cluster RBAC, %s its webhook configurations and %s its CRDs",
		what, act(s.ClusterRBAC), act(s.Webhooks), act(s.CRDs))
}
