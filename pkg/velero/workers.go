package velero

import (
	"context"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serverDeployment is the Deployment `velero install` makes for Velero's
// server, in its namespace.
const serverDeployment = "velero"

// workersFlag is the server's flag of its item-block workers (default 1).
const workersFlag = "--item-block-worker-count"

// Workers reads how many item-block workers Velero's server runs, from its
// Deployment's args; known is false when the Deployment cannot be read
// (absent, or csv-cleaner may not: manifests/velero gives the right).
func (c Client) Workers(ctx context.Context) (workers int, known bool, _ error) {
	d := &appsv1.Deployment{}
	err := c.Live.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: serverDeployment}, d)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return 0, false, nil
	case err != nil:
		return 0, false, absent(err)
	}
	for _, ctr := range d.Spec.Template.Spec.Containers {
		if ctr.Name == serverDeployment {
			return workersOf(append(append([]string(nil), ctr.Command...), ctr.Args...)), true, nil
		}
	}
	return 0, false, nil
}

// workersOf reads the item-block worker count from a server's arguments.
func workersOf(args []string) int {
	for i, a := range args {
		value, ok := strings.CutPrefix(a, workersFlag+"=")
		if !ok && a == workersFlag && i+1 < len(args) {
			value, ok = args[i+1], true
		}
		if n, err := strconv.Atoi(value); ok && err == nil && n > 0 {
			return n
		}
	}
	return 1
}
