package decide

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

func policy(name string, prio int32, csvSel, nsSel map[string]string) cleanupv1alpha1.CleanupPolicy {
	p := cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}
	p.Spec.Priority = prio
	if csvSel != nil {
		p.Spec.CSVSelector = &metav1.LabelSelector{MatchLabels: csvSel}
	}
	if nsSel != nil {
		p.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: nsSel}
	}
	return p
}

func TestSelectPolicy(t *testing.T) {
	csvLabels := map[string]string{"team": "a"}
	nsLabels := map[string]string{"env": "prod"}
	deleting := policy("deleting", 100, nil, nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	invalid := policy("invalid", 100, nil, nil)
	invalid.Spec.CSVSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}

	tests := []struct {
		name       string
		policies   []cleanupv1alpha1.CleanupPolicy
		wantWinner string
		wantOthers int
		wantErrs   int
	}{
		{"no policy manages nothing", nil, "", 0, 0},
		{"empty selectors select all", []cleanupv1alpha1.CleanupPolicy{policy("all", 0, nil, nil)}, "all", 0, 0},
		{"csv selector mismatch", []cleanupv1alpha1.CleanupPolicy{policy("b", 0, map[string]string{"team": "b"}, nil)}, "", 0, 0},
		{"namespace selector mismatch", []cleanupv1alpha1.CleanupPolicy{policy("dev", 0, nil, map[string]string{"env": "dev"})}, "", 0, 0},
		{"both match", []cleanupv1alpha1.CleanupPolicy{policy("p", 0, map[string]string{"team": "a"}, map[string]string{"env": "prod"})}, "p", 0, 0},
		{"highest priority wins", []cleanupv1alpha1.CleanupPolicy{policy("low", 1, nil, nil), policy("high", 5, nil, nil)}, "high", 1, 0},
		{"tie goes to first name", []cleanupv1alpha1.CleanupPolicy{policy("zeta", 1, nil, nil), policy("alpha", 1, nil, nil)}, "alpha", 1, 0},
		{"deleting policy ignored", []cleanupv1alpha1.CleanupPolicy{deleting, policy("p", 0, nil, nil)}, "p", 0, 0},
		{"invalid selector selects nothing", []cleanupv1alpha1.CleanupPolicy{invalid}, "", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, errs := SelectPolicy(tt.policies, csvLabels, nsLabels)
			got := ""
			if sel.Winner != nil {
				got = sel.Winner.Name
			}
			if got != tt.wantWinner || len(sel.Others) != tt.wantOthers || len(errs) != tt.wantErrs {
				t.Errorf("SelectPolicy = %q, others %v, errs %v; want %q, %d others, %d errs", got, sel.Others, errs, tt.wantWinner, tt.wantOthers, tt.wantErrs)
			}
		})
	}
}

func TestSettingsDefaults(t *testing.T) {
	s := SettingsOf(&cleanupv1alpha1.CleanupPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}})
	want := Settings{Policy: "p", Operands: "Delete", ClusterRBAC: "Delete", Webhooks: "Delete", CRDs: "Orphan",
		OperandTimeout: 10 * time.Minute, OnTimeout: "Wait", CRDProvenance: "Required", ConversionWebhooks: "Disable"}
	if s != want {
		t.Errorf("SettingsOf(empty) = %+v, want %+v", s, want)
	}
}

func TestBackupSettings(t *testing.T) {
	tests := []struct {
		name          string
		backup        *cleanupv1alpha1.BackupSpec
		wantBackup    bool
		wantNamespace string // "" when Velero is nil
	}{
		{name: "absent: no backup", backup: nil},
		{name: "velero, namespace defaulted", backup: &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{}}, wantBackup: true, wantNamespace: "velero"},
		{name: "velero in its own namespace", backup: &cleanupv1alpha1.BackupSpec{Velero: &cleanupv1alpha1.VeleroBackup{Namespace: "backups"}}, wantBackup: true, wantNamespace: "backups"},
		{name: "a backup that names no tool is still asked for", backup: &cleanupv1alpha1.BackupSpec{}, wantBackup: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SettingsOf(&cleanupv1alpha1.CleanupPolicy{Spec: cleanupv1alpha1.CleanupPolicySpec{Backup: tt.backup}})
			if (s.Backup != nil) != tt.wantBackup {
				t.Fatalf("Backup = %+v, want asked for: %v", s.Backup, tt.wantBackup)
			}
			got := ""
			if s.Backup != nil && s.Backup.Velero != nil {
				got = s.Backup.Velero.Namespace
			}
			if got != tt.wantNamespace {
				t.Errorf("Velero's namespace = %q, want %q", got, tt.wantNamespace)
			}
		})
	}
}
