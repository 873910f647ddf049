package decide

import (
	"cmp"
	"fmt"
	"sort"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Settings are a CleanupPolicy's spec with its defaults applied, so that a
// policy written before a default existed (or created without the API
// server's defaulting) behaves as documented.
type Settings struct {
	Policy         string
	Operands       cleanupv1alpha1.Action
	ClusterRBAC    cleanupv1alpha1.Action
	Webhooks       cleanupv1alpha1.Action
	CRDs           cleanupv1alpha1.Action
	OperandTimeout time.Duration
	OnTimeout      cleanupv1alpha1.TimeoutAction
	CRDProvenance  cleanupv1alpha1.Provenance
	// ConversionWebhooks says whether a failing conversion webhook of a proven CRD is disabled.
	ConversionWebhooks cleanupv1alpha1.ConversionAction
	// Backup is the backup that gates every delete; nil when the policy asks for none.
	Backup *BackupSettings
}

// BackupSettings are a policy's backup with its defaults applied. Velero
// is nil when the policy asks for a backup without naming a tool it
// knows: the gate then blocks, it never goes on without a backup.
type BackupSettings struct {
	Velero *cleanupv1alpha1.VeleroBackup
}

// DefaultOperandTimeout is operandTimeout when a policy leaves it out.
const DefaultOperandTimeout = 10 * time.Minute

// SettingsOf applies the documented defaults to a policy's spec.
func SettingsOf(p *cleanupv1alpha1.CleanupPolicy) Settings {
	s := Settings{
		Policy:             p.Name,
		Operands:           orDefault(p.Spec.Operands, cleanupv1alpha1.Delete),
		ClusterRBAC:        orDefault(p.Spec.ClusterRBAC, cleanupv1alpha1.Delete),
		Webhooks:           orDefault(p.Spec.Webhooks, cleanupv1alpha1.Delete),
		CRDs:               orDefault(p.Spec.CRDs, cleanupv1alpha1.Orphan),
		OperandTimeout:     DefaultOperandTimeout,
		OnTimeout:          orDefault(p.Spec.OnTimeout, cleanupv1alpha1.TimeoutWait),
		CRDProvenance:      orDefault(p.Spec.CRDProvenance, cleanupv1alpha1.ProvenanceRequired),
		ConversionWebhooks: orDefault(p.Spec.ConversionWebhooks, cleanupv1alpha1.ConversionDisable),
	}
	if p.Spec.OperandTimeout != nil {
		s.OperandTimeout = p.Spec.OperandTimeout.Duration
	}
	if b := p.Spec.Backup; b != nil {
		s.Backup = &BackupSettings{}
		if b.Velero != nil {
			v := *b.Velero
			v.Namespace = cmp.Or(v.Namespace, cleanupv1alpha1.DefaultVeleroNamespace)
			s.Backup.Velero = &v
		}
	}
	return s
}

func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// Selection is which policies select one CSV.
type Selection struct {
	// Winner manages the CSV; nil when no policy selects it.
	Winner *cleanupv1alpha1.CleanupPolicy
	// Others also select the CSV but lose to Winner.
	Others []string
}

// SelectPolicy returns the policy that manages a CSV with the given labels in
// a namespace with the given labels: of the policies whose selectors both
// match (an empty or absent selector matches everything), the highest
// priority wins, then the name that sorts first. Policies being deleted
// select nothing. A selector that cannot be parsed selects nothing and is
// reported in errs, so a malformed policy never widens what is deleted.
func SelectPolicy(policies []cleanupv1alpha1.CleanupPolicy, csvLabels, nsLabels map[string]string) (sel Selection, errs []error) {
	return SelectAmong(policies, func(p *cleanupv1alpha1.CleanupPolicy) (bool, error) { return Selects(p, csvLabels, nsLabels) })
}

// SelectAmong ranks the policies that selects matches: the highest
// priority wins, then the name that sorts first. Policies being deleted
// select nothing; a selector that cannot be parsed selects nothing and is
// reported in errs.
func SelectAmong(policies []cleanupv1alpha1.CleanupPolicy, selects func(*cleanupv1alpha1.CleanupPolicy) (bool, error)) (sel Selection, errs []error) {
	var matched []*cleanupv1alpha1.CleanupPolicy
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		ok, err := selects(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			matched = append(matched, p)
		}
	}
	if len(matched) == 0 {
		return Selection{}, errs
	}
	sort.Slice(matched, func(i, j int) bool {
		if matched[i].Spec.Priority != matched[j].Spec.Priority {
			return matched[i].Spec.Priority > matched[j].Spec.Priority
		}
		return matched[i].Name < matched[j].Name
	})
	sel.Winner = matched[0]
	for _, p := range matched[1:] {
		sel.Others = append(sel.Others, p.Name)
	}
	return sel, errs
}

// Selects reports whether a policy's two selectors match a CSV's and its
// namespace's labels. A policy that selects ClusterExtensions and has no
// csvSelector selects no CSV.
func Selects(p *cleanupv1alpha1.CleanupPolicy, csvLabels, nsLabels map[string]string) (bool, error) {
	if p.Spec.CSVSelector == nil && p.Spec.ClusterExtensionSelector != nil {
		return false, nil
	}
	for _, s := range []struct {
		what string
		sel  *metav1.LabelSelector
		lbls map[string]string
	}{{"csvSelector", p.Spec.CSVSelector, csvLabels}, {"namespaceSelector", p.Spec.NamespaceSelector, nsLabels}} {
		if s.sel == nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(s.sel)
		if err != nil {
			return false, fmt.Errorf("CleanupPolicy %s has an invalid %s: %w", p.Name, s.what, err)
		}
		if !selector.Matches(labels.Set(s.lbls)) {
			return false, nil
		}
	}
	return true, nil
}

// Managed is the one rule of what csv-cleaner manages: a CSV that a policy
// selects (winner, from SelectPolicy) and that is not one of OLM's copies.
func Managed(winner *cleanupv1alpha1.CleanupPolicy, csv metav1.Object) bool {
	return winner != nil && !operatorsv1alpha1.IsCopied(csv)
}
