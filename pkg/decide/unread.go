package decide

import (
	"fmt"
	"slices"
	"strings"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// Why a scan could not read objects of a kind (UnreadKind.Reason).
const (
	// UnreadForbidden: csv-cleaner may not list the kind. The garbage
	// collector, with its own rights, reads and deletes its objects.
	UnreadForbidden = "Forbidden"
	// UnreadStorage: the API server cannot read some of its objects at the
	// version the garbage collector and Velero read (a conversion webhook
	// that fails, data it cannot decrypt or decode). Those read at the
	// version they are stored at are Stranded nodes; the rest nobody reads.
	UnreadStorage = "StoreReadError"
	// UnreadUnavailable: its API did not answer (an aggregated API server
	// that is down, a group discovery could not describe). Nobody reads its
	// objects while it is down, the garbage collector neither.
	UnreadUnavailable = "Unavailable"
)

// UnreadKind is a kind of which a scan of the cluster could not read every
// object at the version the garbage collector reads, and whether that
// concerns an uninstall (JudgeUnread).
type UnreadKind struct {
	// Resource is plural.group; for a group discovery could not describe,
	// group/version, every kind of it.
	Resource string `json:"resource"`
	// Reason is UnreadForbidden, UnreadStorage or UnreadUnavailable.
	Reason string `json:"reason"`
	// Namespaced: its objects are namespaced (true when not known).
	Namespaced bool `json:"namespaced"`
	// Anywhere: objects not read could be anywhere (the kind was not read at all).
	Anywhere bool `json:"anywhere,omitempty"`
	// Namespaces are where objects could not be read at any version ("" for
	// the cluster scope); Objects are those the API server named.
	Namespaces []string `json:"namespaces,omitempty"`
	Objects    []Held   `json:"objects,omitempty"`
	// Stranded counts the objects read only at the version they are stored
	// at (Node.Stranded); Dependents are those of them the uninstall destroys.
	Stranded   int    `json:"stranded,omitempty"`
	Dependents []Held `json:"dependents,omitempty"`
	// Error is what the API server answered.
	Error string `json:"error"`
	// Concerns: an object of it that the garbage collector cannot read now
	// is, or may be, owned by what the uninstall destroys; Message says why,
	// or why not.
	Concerns bool   `json:"concerns"`
	Message  string `json:"message"`
}

// unreadSomewhere reports whether some of u's objects nobody read.
func (u *UnreadKind) unreadSomewhere() bool { return u.Anywhere || len(u.Namespaces) > 0 }

// Reach is where an uninstall destroys objects: the namespaces of what it
// deletes and of what the garbage collector deletes with them, and whether
// any of them is cluster-scoped.
type Reach struct {
	Namespaces map[string]bool
	Cluster    bool
}

// ReachOf is where destroyed are.
func ReachOf(destroyed []Held) Reach {
	r := Reach{Namespaces: map[string]bool{}}
	for _, h := range destroyed {
		if h.Namespace == "" {
			r.Cluster = true
		} else {
			r.Namespaces[h.Namespace] = true
		}
	}
	return r
}

// mayOwn reports whether something the uninstall destroys may own an object
// in namespace ns ("" for a cluster-scoped one), as the garbage collector
// reads ownerReferences: a namespaced owner only in its dependent's
// namespace, a cluster-scoped owner anywhere.
func (r Reach) mayOwn(ns string) bool {
	return r.Cluster || ns != "" && r.Namespaces[ns]
}

// mayOwnAnywhere reports whether something the uninstall destroys may own
// an object of a kind whose objects could be anywhere.
func (r Reach) mayOwnAnywhere(namespaced bool) bool {
	return r.Cluster || namespaced && len(r.Namespaces) > 0
}

// UnreadInput is what JudgeUnread reads.
type UnreadInput struct {
	Kinds []UnreadKind
	// Dependents are what the garbage collector deletes with the
	// uninstall's deletions (Dependents), Stranded ones among them.
	Dependents []Node
	// Reach is where the uninstall destroys objects (ReachOf its deletions
	// and dependents).
	Reach Reach
}

// JudgeUnread decides whether each kind a scan could not read whole concerns
// the uninstall (a Stranded dependent, or objects nobody read where what it
// destroys may own them), and the problem that blocks the backup gate
// (docs/backup.md, "A kind nobody can read").
func JudgeUnread(in UnreadInput) ([]UnreadKind, *Problem) {
	out := slices.Clone(in.Kinds)
	var forbidden []string
	var problems []Problem
	for i := range out {
		u := &out[i]
		u.Dependents = nil
		for _, n := range in.Dependents {
			if n.Stranded && n.ResourceOf() == u.Resource {
				u.Dependents = append(u.Dependents, n.Held)
			}
		}
		switch {
		case len(u.Dependents) > 0:
			u.Concerns = true
		case u.Anywhere:
			u.Concerns = in.Reach.mayOwnAnywhere(u.Namespaced)
		default:
			u.Concerns = slices.ContainsFunc(u.Namespaces, in.Reach.mayOwn)
		}
		u.Message = unreadMessage(u, in.Reach)
		switch {
		case !u.Concerns:
		case u.Reason == UnreadForbidden:
			forbidden = append(forbidden, u.Resource)
		default:
			problems = append(problems, Problem{Reason: cleanupv1alpha1.BlockedDependentsUnreadable, Object: "kind " + u.Resource,
				Message: u.Message + "; no Backup can hold them, so nothing is deleted before they can be read, and the uninstall goes on by itself once they can"})
		}
	}
	if len(forbidden) > 0 {
		problems = append([]Problem{{Reason: cleanupv1alpha1.BlockedForbidden, Object: "kinds " + strings.Join(forbidden, ", "),
			Message: fmt.Sprintf("csv-cleaner may not list %s, whose objects the garbage collector deletes with the uninstall's deletions if they own them, so no backup can be shown to hold everything it destroys: grant csv-cleaner list on them (manifests/velero/dependents.yaml, docs/backup.md#rights)",
				strings.Join(forbidden, ", "))}}, problems...)
	}
	if len(problems) == 0 {
		return out, nil
	}
	return out, JoinProblems(problems)
}

// unreadMessage says for a person what was not read of u, whether it
// concerns the uninstall, and what to do.
func unreadMessage(u *UnreadKind, reach Reach) string {
	switch {
	case len(u.Dependents) > 0:
		return fmt.Sprintf("%s of %s that the garbage collector deletes with the uninstall's deletions (%s) can be read only at the version they are stored at (%s: %s): the garbage collector cannot delete them before they read at the version it reads, and deletes them then, and Velero cannot back them up; to read them, %s",
			count(len(u.Dependents), "object"), u.Resource, heldNames(u.Dependents), u.Reason, u.Error, unreadFix(u))
	case u.Concerns && u.Reason == UnreadForbidden:
		return fmt.Sprintf("%s: csv-cleaner may not list them; the garbage collector deletes those that what the uninstall destroys owns: grant csv-cleaner list on %s (manifests/velero/dependents.yaml, docs/backup.md#rights)", describeUnread(u), u.Resource)
	case u.Concerns:
		return fmt.Sprintf("%s (%s: %s): nobody can read them, the garbage collector neither, which deletes those that what the uninstall destroys owns once they can be read; to read them, %s",
			describeUnread(u), u.Reason, u.Error, unreadFix(u))
	case !u.unreadSomewhere():
		return fmt.Sprintf("%s of %s could not be read at the version the garbage collector reads (%s: %s); csv-cleaner read them at the version they are stored at, and none is owned by what the uninstall destroys, so it goes on",
			count(u.Stranded, "object"), u.Resource, u.Reason, u.Error)
	}
	return fmt.Sprintf("%s (%s: %s): nothing the uninstall destroys can own them (%s), so it goes on without them", describeUnread(u), u.Reason, u.Error, whyNotOwned(u, reach))
}

// describeUnread names what nobody read of u: "2 objects of R in
// namespace a could not be read (a/x, a/y)", "objects of R in every
// namespace could not be read".
func describeUnread(u *UnreadKind) string {
	where := "anywhere in the cluster"
	switch {
	case len(u.Namespaces) > 0:
		where = placeList(u.Namespaces)
	case u.Namespaced:
		where = "in every namespace"
	}
	if len(u.Objects) == 0 {
		return fmt.Sprintf("objects of %s %s could not be read", u.Resource, where)
	}
	return fmt.Sprintf("%s of %s %s could not be read (%s)", count(len(u.Objects), "object"), u.Resource, where, heldNames(u.Objects))
}

// count is "1 object", "3 objects".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// heldNames names up to three objects, and how many more.
func heldNames(hs []Held) string {
	out := make([]string, 0, min(len(hs), 3)+1)
	for _, h := range hs[:min(len(hs), 3)] {
		out = append(out, h.Path())
	}
	if len(hs) > 3 {
		out = append(out, fmt.Sprintf("and %d more", len(hs)-3))
	}
	return strings.Join(out, ", ")
}

// placeList names namespaces for a person, "" as the cluster scope.
func placeList(ns []string) string {
	var named []string
	cluster := false
	for _, n := range ns {
		if n == "" {
			cluster = true
		} else {
			named = append(named, n)
		}
	}
	var parts []string
	switch len(named) {
	case 0:
	case 1:
		parts = append(parts, "in namespace "+named[0])
	default:
		parts = append(parts, "in namespaces "+strings.Join(named, ", "))
	}
	if cluster {
		parts = append(parts, "in the cluster scope")
	}
	return strings.Join(parts, " and ")
}

// whyNotOwned says why nothing the uninstall destroys can own u's objects.
func whyNotOwned(u *UnreadKind, reach Reach) string {
	if len(reach.Namespaces) == 0 && !reach.Cluster {
		return "it destroys nothing"
	}
	if !u.Namespaced || slices.Equal(u.Namespaces, []string{""}) {
		return "it destroys no cluster-scoped object, and only one owns a cluster-scoped object"
	}
	return "an owner is in its dependent's namespace or cluster-scoped, and the uninstall destroys nothing there"
}

// unreadFix says how an admin lets the objects of u be read.
func unreadFix(u *UnreadKind) string {
	switch {
	case u.Reason == UnreadStorage && strings.Contains(u.Error, "conversion webhook for "):
		return "bring the CRD's conversion webhook back, set its spec.conversion to None where the versions read alike, or delete those objects (kubectl delete --ignore-store-read-error-with-cluster-breaking-potential)"
	case u.Reason == UnreadStorage:
		return "let the API server read them again (its encryption key, its storage), or delete those objects (kubectl delete --ignore-store-read-error-with-cluster-breaking-potential)"
	}
	return "bring its API back (kubectl get apiservices says which one is not Available)"
}

// Path is namespace/name, or name for a cluster-scoped object.
func (d Held) Path() string {
	if d.Namespace == "" {
		return d.Name
	}
	return d.Namespace + "/" + d.Name
}

// ServesNoOwnedObjects reports whether an API group serves no object the
// garbage collector deletes, whatever its state: the metrics APIs, which
// serve only get and list (an aggregated metrics server that is down is
// common, and never holds a dependent).
func ServesNoOwnedObjects(group string) bool {
	switch group {
	case "metrics.k8s.io", "custom.metrics.k8s.io", "external.metrics.k8s.io":
		return true
	}
	return false
}
