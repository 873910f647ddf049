package undoplan

import (
	"fmt"
	"slices"
	"strings"
)

// Workload is a Deployment of an operator that serves the CRDs of an
// uninstall (or of the owner uninstalled), as an undo finds it.
type Workload struct {
	// Deployment is its namespace/name ("" when it is absent and its
	// installer does not name it yet); Of, what installed it ("CSV ns/name",
	// "ClusterExtension name"); OLMv1, operator-controller.
	Deployment, Of string
	OLMv1          bool
	// Absent: its installer names it and has not made it yet.
	Absent bool
	// Replicas is its spec's (nil: 1); Pods, the replicas it still has
	// (status.replicas: pods that have not gone yet).
	Replicas *int32
	Pods     int32
}

// runs reports whether the workload runs, or is about to, and how.
func (w Workload) runs() (string, bool) {
	replicas := int32(1)
	if w.Replicas != nil {
		replicas = *w.Replicas
	}
	switch {
	case w.Absent && w.Deployment == "":
		return w.Of + " is being installed: its Deployment is about to be made", true
	case w.Absent:
		return fmt.Sprintf("%s is being installed: its Deployment %s is about to be made", w.Of, w.Deployment), true
	case replicas > 0:
		return fmt.Sprintf("Deployment %s of %s has %d replica(s)", w.Deployment, w.Of, replicas), true
	case w.Pods > 0:
		return fmt.Sprintf("Deployment %s of %s is scaled to zero, and %d of its pods have not gone yet", w.Deployment, w.Of, w.Pods), true
	}
	return "", false
}

// OperatorRunning says which workloads of the operator run, or are about
// to, and what to do; "" when none does. An undo restores nothing beside
// a running operator: it would see each restored custom resource before
// what it owned is back and linked to it again, and an operator that finds
// its children by their ownerReferences makes new ones beside the
// restored ones (docs/backup.md, "Undo, then reinstall").
func OperatorRunning(ws []Workload) string {
	var running, scale []string
	v1 := false
	for _, w := range ws {
		how, ok := w.runs()
		if !ok {
			continue
		}
		running = append(running, how)
		if w.OLMv1 {
			v1 = true
		} else if !w.Absent {
			ns, name, _ := strings.Cut(w.Deployment, "/")
			scale = append(scale, fmt.Sprintf("kubectl scale deployment -n %s %s --replicas=0", ns, name))
		}
	}
	if len(running) == 0 {
		return ""
	}
	slices.Sort(running)
	msg := "the operator that serves the uninstall's CRDs runs (" + strings.Join(running, "; ") + "): beside it, the undo would let it see each restored custom resource " +
		"before what it owned is linked to it again, and an operator that finds its children by their ownerReferences makes new ones beside the restored ones; " +
		"nothing was restored. Undo before the operator is installed again, then install it"
	if len(scale) > 0 {
		msg += "; or stop it for the undo (" + strings.Join(scale, "; ") + ": OLM v0 leaves it so) and scale it back once the undo is done"
	}
	if v1 {
		msg += "; operator-controller (OLM v1) scales a ClusterExtension's Deployment back up, so a ClusterExtension cannot be stopped that way"
	}
	return msg + ". --beside-operator (spec.besideOperator) undoes beside it all the same, at that risk (docs/backup.md, \"Undo, then reinstall\")"
}
