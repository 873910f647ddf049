package decide

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// The decisions of the backup gate: before the first delete of an
// uninstall, a Velero Backup that holds every object the plan deletes must
// exist and be complete. What to back up, what a Backup's
// phase means for the uninstall, and whether its resource list holds every
// planned deletion are decided here; the engine reads and writes Velero's
// objects.

// Velero's Backup phases (velero.io/v1, status.phase).
const (
	BackupPhaseNew               = "New"
	BackupPhaseFailedValidation  = "FailedValidation"
	BackupPhaseInProgress        = "InProgress"
	BackupPhaseWaitingForPlugins = "WaitingForPluginOperations"
	BackupPhaseWaitingPartial    = "WaitingForPluginOperationsPartiallyFailed"
	BackupPhaseFinalizing        = "Finalizing"
	BackupPhaseFinalizingPartial = "FinalizingPartiallyFailed"
	BackupPhaseCompleted         = "Completed"
	BackupPhasePartiallyFailed   = "PartiallyFailed"
	BackupPhaseFailed            = "Failed"
	BackupPhaseDeleting          = "Deleting"
)

// A Backup's name: the prefix, the owner's name as far as it fits, and a
// hash of the owner, within a DNS label's 63 characters.
const (
	backupNamePrefix     = "csv-cleaner-"
	backupNameMax        = 63
	backupNameHashLength = 10
)

// BackupName is the name of the Backup that gates the uninstall of the owner
// of uid at attempt (the first with no suffix, then -2, -3, ...): the same in
// every pass and every csv-cleaner, another for a new owner of the same name;
// a DNS label.
func BackupName(kind, namespace, name string, uid types.UID, attempt int32) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{kind, namespace, name, string(uid)}, "/")))
	hash := hex.EncodeToString(sum[:])[:backupNameHashLength]
	suffix := ""
	if attempt > 1 {
		suffix = "-" + strconv.Itoa(int(attempt))
	}
	readable := strings.ToLower(strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '-'
	}, name), "-"))
	if most := backupNameMax - len(backupNamePrefix) - 1 - backupNameHashLength - len(suffix); len(readable) > most {
		readable = strings.TrimRight(readable[:most], "-")
	}
	if readable == "" {
		return backupNamePrefix + hash + suffix
	}
	return backupNamePrefix + readable + "-" + hash + suffix
}

// OwnerHash names an owner by its kind, namespace and name, as a label
// value: an owner's Backups carry it, so that its uninstall can be undone
// after its record is gone with its namespace.
func OwnerHash(kind, namespace, name string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{kind, namespace, name}, "/")))
	return hex.EncodeToString(sum[:])[:20]
}

// Held is one object a backup must hold: one the uninstall deletes, or one
// the garbage collector deletes because of it (a dependent).
type Held struct {
	// Group and Kind name its kind (Group "" for the core group).
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// Resource is its kind's plural, as Velero's includedResources name it
	// with the group (plural.group).
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// DeletionsOf are the objects a plan's items delete that a backup must
// hold: the operands, cluster RBAC, webhook configurations and CRDs the
// uninstall deletes, and the CRDs the garbage collector deletes with a
// ClusterExtension. An object already being deleted (AlreadyTerminating,
// RemoveFinalizers) is not the uninstall's deletion: someone else deleted
// it. plural names a kind's resource (group "" is the core group).
func DeletionsOf(items []Item, plural func(group, kind string) (string, error)) ([]Held, error) {
	var out []Held
	resources := map[string]string{}
	for _, it := range items {
		if it.Action != ActionDelete || it.Reason == DeleteTerminating || it.Reason == DeleteRemoveFinalizers {
			continue
		}
		kind, group, _ := strings.Cut(it.Kind, ".")
		resource, ok := resources[it.Kind]
		if !ok {
			var err error
			if resource, err = plural(group, kind); err != nil {
				return nil, fmt.Errorf("naming the resource of %s: %w", it.Kind, err)
			}
			resources[it.Kind] = resource
		}
		out = append(out, Held{Group: group, Kind: kind, Resource: resource, Namespace: it.Namespace, Name: it.Name})
	}
	return out, nil
}

// BackupContent is what the Backup of an uninstall includes: whole kinds
// (every instance of the kinds whose instances it deletes, in its targets:
// they are listed while Velero backs them up) and named objects (its other
// deletions, and the dependents the garbage collector deletes with what it
// deletes). Velero backs up more than the deletions (an instance the plan
// then keeps), never less; the undo restores only what was destroyed.
type BackupContent struct {
	// Namespaces are includedNamespaces, sorted: where the whole namespaced
	// kinds are taken ([EveryNamespace] for every namespace), and the
	// namespaces of named objects.
	Namespaces []string
	// Whole are the kinds backed up whole, sorted by resource.
	Whole []WholeKind
	// WholeIn are the namespaces where the whole namespaced kinds are taken
	// ([EveryNamespace] for every namespace).
	WholeIn []string
	// Named are the objects backed up by name, sorted.
	Named []Held
	// Existing are the namespaces there are, when the whole kinds are taken
	// in every namespace and some object is named in a namespace (see
	// NeedsNamespaces).
	Existing []string
}

// NeedsNamespaces reports whether a Backup of c must name every namespace
// there is (Existing): its whole kinds are taken in every namespace and it
// names a namespaced object. Velero v1.18.3 applies a namespace pattern's
// filters ("*") to every kind it lists cluster-wide, cluster-scoped ones
// too, so that the kinds named only in exact namespaces would be left out;
// each namespace gets an exact entry instead.
func (c BackupContent) NeedsNamespaces() bool {
	if !slices.Contains(c.WholeIn, EveryNamespace) {
		return false
	}
	return slices.ContainsFunc(c.Named, func(h Held) bool { return h.Namespace != "" })
}

// WholeKind is a kind whose every instance a Backup takes (in
// BackupContent.WholeIn when it is namespaced).
type WholeKind struct {
	// Resource is plural.group.
	Resource   string
	Namespaced bool
}

// EveryNamespace is how a Backup's includedNamespaces names every namespace.
const EveryNamespace = "*"

// BackupScopeOfKinds is an uninstall's Backup made before its instances are
// listed: every instance of the kinds it deletes in its targets, and by name
// its other deletions and their dependents. Every instance the plan then
// deletes is of one of these kinds in one of these namespaces.
func BackupScopeOfKinds(kinds []CRDScope, targets NamespaceSet, others, dependents []Held) BackupContent {
	var out BackupContent
	namespaced := false
	for _, k := range kinds {
		resource := Held{Group: k.GVR.Group, Resource: k.GVR.Resource}.ResourceOf()
		if !slices.ContainsFunc(out.Whole, func(w WholeKind) bool { return w.Resource == resource }) {
			out.Whole = append(out.Whole, WholeKind{Resource: resource, Namespaced: k.Namespaced})
		}
		namespaced = namespaced || k.Namespaced
	}
	switch {
	case !namespaced:
	case targets.All():
		out.WholeIn = []string{EveryNamespace}
	default:
		for ns := range targets {
			if ns != "" {
				out.WholeIn = append(out.WholeIn, ns)
			}
		}
		slices.Sort(out.WholeIn)
	}
	out.Namespaces = slices.Clone(out.WholeIn)
	whole := func(h Held) bool {
		return slices.ContainsFunc(out.Whole, func(w WholeKind) bool {
			return w.Resource == h.ResourceOf() && (!w.Namespaced || slices.Contains(out.WholeIn, EveryNamespace) || slices.Contains(out.WholeIn, h.Namespace))
		})
	}
	for _, h := range slices.Concat(others, dependents) {
		if whole(h) || slices.Contains(out.Named, h) {
			continue
		}
		out.Named = append(out.Named, h)
		if h.Namespace != "" && !slices.Contains(out.Namespaces, EveryNamespace) && !slices.Contains(out.Namespaces, h.Namespace) {
			out.Namespaces = append(out.Namespaces, h.Namespace)
		}
	}
	slices.Sort(out.Namespaces)
	slices.SortFunc(out.Whole, func(a, b WholeKind) int { return strings.Compare(a.Resource, b.Resource) })
	slices.SortFunc(out.Named, compareHeld)
	return out
}

// compareHeld orders objects by resource, namespace and name.
func compareHeld(a, b Held) int {
	return cmp.Or(strings.Compare(a.ResourceOf(), b.ResourceOf()), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// Empty reports whether the Backup would include nothing: the uninstall deletes nothing.
func (c BackupContent) Empty() bool { return len(c.Whole) == 0 && len(c.Named) == 0 }

// Resources are every resource the Backup includes (plural.group), sorted.
func (c BackupContent) Resources() []string {
	var out []string
	for _, w := range c.Whole {
		out = append(out, w.Resource)
	}
	for _, h := range c.Named {
		if r := h.ResourceOf(); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// BackupGate is what an uninstall does with its Backup as Velero reports it.
type BackupGate struct {
	// Wait: the Backup is still running; nothing is deleted yet.
	Wait bool
	// Verify: the Backup completed; its resource list decides (VerifyBackup).
	Verify bool
	// Problem blocks the uninstall: the Backup failed.
	Problem *Problem
}

// GateOnBackup decides on the phase of the Backup called name. An unknown
// phase is waited on, never taken for a completed backup. A Backup that
// failed blocks: RetryBackup says when the next one is made.
func GateOnBackup(name, phase string) BackupGate {
	switch phase {
	case BackupPhaseCompleted:
		return BackupGate{Verify: true}
	case BackupPhaseFailed, BackupPhasePartiallyFailed, BackupPhaseFailedValidation, BackupPhaseDeleting:
		return BackupGate{Problem: &Problem{Reason: cleanupv1alpha1.BlockedBackupFailed, Object: "Backup " + name,
			Message: fmt.Sprintf("Velero's Backup %s is %s: nothing is deleted without a complete backup (velero backup describe %s --details, velero backup logs %s say why)", name, phase, name, name)}}
	}
	return BackupGate{Wait: true}
}

// How long the gate waits before it makes a Backup again after one that
// failed or came out incomplete: backupRetryMin, doubling with each
// attempt up to backupRetryMax. Velero learns the API server's kinds at
// its start and every 5 minutes after: the attempts 30 s, 1.5, 3.5 and 7.5
// minutes after an incomplete one began reach past its next refresh.
const (
	backupRetryMin = 30 * time.Second
	backupRetryMax = time.Hour
)

// FailedBackup is a Backup of the uninstall that failed or came out incomplete.
type FailedBackup struct {
	// Problem is GateOnBackup's or VerifyBackup's.
	Problem *Problem
	// Attempt is its attempt; Next names the Backup that follows it.
	Attempt int32
	Next    string
	// Created is when it was made; Seen, when the gate saw it fail.
	Created, Seen time.Time
}

// RetryBackup says when the gate makes the next Backup after a failed one,
// and the problem that blocks the uninstall until then, which says what it
// waits for: no one needs to delete the failed Backup (it stays for them to
// read; csv-cleaner deletes no Backup). The next Backup is made once the
// backoff has passed and, after a failed one, Velero's storage location is
// Available (the gate checks it before it makes a Backup).
func RetryBackup(f FailedBackup) (time.Time, *Problem) {
	backoff := backupRetryMin << min(max(f.Attempt-1, 0), 8)
	at := f.Seen.Add(min(backoff, backupRetryMax))
	why := "once Velero's storage location is Available"
	if f.Problem.Reason == cleanupv1alpha1.BlockedBackupIncomplete {
		why = "by when Velero may have learnt the API server's kinds again (it does every 5 minutes)"
	}
	p := *f.Problem
	p.Message = fmt.Sprintf("%s; csv-cleaner makes a new Backup, %s, at %s, %s", p.Message, f.Next, at.UTC().Format(time.RFC3339), why)
	return at, &p
}

// VerifyBackup returns the deletions a completed Backup's resource list lacks
// (Velero's "group/version/Kind" to "namespace/name"; the version is not
// compared) and, when some are, the problem that blocks.
func VerifyBackup(name string, list map[string][]string, deletions []Held) ([]Held, *Problem) {
	held := map[string]bool{}
	for key, objects := range list {
		group, kind := groupKindOf(key)
		for _, o := range objects {
			held[group+"/"+kind+"/"+o] = true
		}
	}
	var missing []Held
	for _, d := range deletions {
		obj := d.Name
		if d.Namespace != "" {
			obj = d.Namespace + "/" + d.Name
		}
		if !held[d.Group+"/"+d.Kind+"/"+obj] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	first := missing[0]
	object := first.Kind + " " + first.Name
	if first.Namespace != "" {
		object = first.Kind + " " + first.Namespace + "/" + first.Name
	}
	return missing, &Problem{Reason: cleanupv1alpha1.BlockedBackupIncomplete, Object: object,
		Message: fmt.Sprintf("Velero's Backup %s completed without %d of the %d objects the uninstall would destroy (first: %s): nothing is destroyed that no backup holds; Velero backs up no object of a kind its discovery (refreshed every 5 minutes) does not know yet, and no object created after it began (velero backup describe %s --details)", name, len(missing), len(deletions), object, name)}
}

// groupKindOf reads the group and kind of a resource list's key.
func groupKindOf(key string) (group, kind string) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 3:
		return parts[0], parts[2]
	case 2:
		return "", parts[1]
	}
	return "", key
}
