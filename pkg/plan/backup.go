package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// The decisions of the backup gate: before the first delete of an
// uninstall, a Velero Backup that holds every object the plan deletes must
// exist and be complete (issue 34). What to back up, what a Backup's
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

// BackupName is the name of the Backup that gates the uninstall of the
// owner of uid (kind, namespace and name name it for a person): the same
// for every pass and every csv-cleaner, so that a restart finds the Backup
// it made and never makes a second, and another for a new owner of the
// same name. It is a DNS label of at most 63 characters.
func BackupName(kind, namespace, name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{kind, namespace, name, string(uid)}, "/")))
	hash := hex.EncodeToString(sum[:])[:backupNameHashLength]
	readable := strings.ToLower(strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '-'
	}, name), "-"))
	if most := backupNameMax - len(backupNamePrefix) - 1 - backupNameHashLength; len(readable) > most {
		readable = strings.TrimRight(readable[:most], "-")
	}
	if readable == "" {
		return backupNamePrefix + hash
	}
	return backupNamePrefix + readable + "-" + hash
}

// Deletion is one object an uninstall's plan deletes, as a backup must hold it.
type Deletion struct {
	// Group and Kind name its kind (Group "" for the core group).
	Group, Kind string
	// Resource is its kind's plural, as Velero's includedResources name it
	// with the group (plural.group).
	Resource  string
	Namespace string
	Name      string
}

// DeletionsOf are the objects a plan's items delete that a backup must
// hold: the operands, cluster RBAC, webhook configurations and CRDs the
// uninstall deletes, and the CRDs the garbage collector deletes with a
// ClusterExtension. An object already being deleted (AlreadyTerminating,
// RemoveFinalizers) is not the uninstall's deletion: someone else deleted
// it. plural names a kind's resource (group "" is the core group).
func DeletionsOf(items []Item, plural func(group, kind string) (string, error)) ([]Deletion, error) {
	var out []Deletion
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
		out = append(out, Deletion{Group: group, Kind: kind, Resource: resource, Namespace: it.Namespace, Name: it.Name})
	}
	return out, nil
}

// BackupContent is what the Backup of an uninstall includes: the
// namespaces and resources of every planned deletion. Velero backs up the
// objects of those resources in those namespaces (more than the deletions,
// never less) and the cluster-scoped ones among them.
type BackupContent struct {
	// Namespaces are includedNamespaces, sorted; empty when every deletion
	// is cluster-scoped, [EveryNamespace] for every namespace.
	Namespaces []string
	// Resources are includedResources (plural.group), sorted.
	Resources []string
	// ClusterScoped: some deletion is cluster-scoped (includeClusterResources).
	ClusterScoped bool
}

// BackupScope is what the Backup must include to hold every deletion.
func BackupScope(deletions []Deletion) BackupContent {
	var out BackupContent
	for _, d := range deletions {
		resource := d.Resource
		if d.Group != "" {
			resource += "." + d.Group
		}
		if !slices.Contains(out.Resources, resource) {
			out.Resources = append(out.Resources, resource)
		}
		switch {
		case d.Namespace == "":
			out.ClusterScoped = true
		case !slices.Contains(out.Namespaces, d.Namespace):
			out.Namespaces = append(out.Namespaces, d.Namespace)
		}
	}
	slices.Sort(out.Namespaces)
	slices.Sort(out.Resources)
	return out
}

// EveryNamespace is how a Backup's includedNamespaces names every namespace.
const EveryNamespace = "*"

// BackupScopeOfKinds is what the Backup of an uninstall includes when it is
// made before the instances are listed (the instances are planned while
// Velero backs them up): every instance of each kind whose instances the
// uninstall deletes (kinds: the scopes of CRDs that exist and are not
// kept), in its targets (EveryNamespace when they are every namespace),
// and what the other deletions need (cluster RBAC, webhook configurations,
// CRDs: BackupScope). Every instance the plan then deletes is of one of
// these kinds in one of these namespaces, so the Backup holds it: more
// than the deletions, never less (a target namespace that does not exist
// adds nothing, an instance the plan keeps is backed up all the same).
func BackupScopeOfKinds(kinds []CRDScope, targets NamespaceSet, others []Deletion) BackupContent {
	out := BackupScope(others)
	namespaced := false
	for _, k := range kinds {
		resource := k.GVR.Resource
		if k.GVR.Group != "" {
			resource += "." + k.GVR.Group
		}
		if !slices.Contains(out.Resources, resource) {
			out.Resources = append(out.Resources, resource)
		}
		if !k.Namespaced {
			out.ClusterScoped = true
			continue
		}
		namespaced = true
	}
	switch {
	case !namespaced:
	case targets.All():
		out.Namespaces = []string{EveryNamespace}
	default:
		for ns := range targets {
			if ns != "" && !slices.Contains(out.Namespaces, ns) {
				out.Namespaces = append(out.Namespaces, ns)
			}
		}
	}
	slices.Sort(out.Namespaces)
	slices.Sort(out.Resources)
	return out
}

// Empty reports whether the Backup would include nothing: the uninstall deletes nothing.
func (c BackupContent) Empty() bool { return len(c.Resources) == 0 }

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
// phase is waited on, never taken for a completed backup.
func GateOnBackup(name, phase string) BackupGate {
	switch phase {
	case BackupPhaseCompleted:
		return BackupGate{Verify: true}
	case BackupPhaseFailed, BackupPhasePartiallyFailed, BackupPhaseFailedValidation, BackupPhaseDeleting:
		return BackupGate{Problem: &Problem{Reason: cleanupv1alpha1.BlockedBackupFailed, Object: "Backup " + name,
			Message: fmt.Sprintf("Velero's Backup %s is %s: nothing is deleted without a complete backup; see velero backup describe %s --details, fix the cause and delete the Backup so that csv-cleaner makes it again", name, phase, name)}}
	}
	return BackupGate{Wait: true}
}

// VerifyBackup checks a completed Backup's resource list against the
// deletions: list maps "group/version/Kind" ("version/Kind" for the core
// group) to the "namespace/name" (or "name") of each object backed up, as
// Velero's BackupResourceList gives it. The version is not compared: Velero
// backs up the preferred version of a kind, and the plan may read another.
// It returns the deletions the list lacks and, when some are, the problem
// that blocks the uninstall.
func VerifyBackup(name string, list map[string][]string, deletions []Deletion) ([]Deletion, *Problem) {
	held := map[string]bool{}
	for key, objects := range list {
		group, kind := groupKindOf(key)
		for _, o := range objects {
			held[group+"/"+kind+"/"+o] = true
		}
	}
	var missing []Deletion
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
		Message: fmt.Sprintf("Velero's Backup %s completed without %d of the %d objects the uninstall would delete (first: %s): nothing is deleted that no backup holds; Velero backs up no object of a kind its discovery (refreshed every 5 minutes) does not know yet: see velero backup describe %s --details, and delete the Backup once the cause is gone so that csv-cleaner makes it again", name, len(missing), len(deletions), object, name)}
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
