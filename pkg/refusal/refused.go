package refusal

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Object is an object the API server refused to delete; with an empty
// name, a kind it refused to list.
type Object struct {
	Obj     metav1.PartialObjectMetadata
	Refusal Refusal
}

// Operand is an operand, or an operand kind, the API server refused.
type Operand struct {
	Kind string
	Object
}

// Problem blocks an uninstall on what the API server refused, named by
// the first refused object and what refused it; nil when nothing was.
func Problem(refused []Operand) *decide.Problem {
	if len(refused) == 0 {
		return nil
	}
	first := refused[0]
	object, verb := first.Kind, "list"
	if first.Obj.Name != "" {
		object, verb = first.Kind+" "+Path(first.Obj.Namespace, first.Obj.Name), "delete"
	}
	if first.Refusal.Reason == cleanupv1alpha1.BlockedForbidden {
		return &decide.Problem{Reason: cleanupv1alpha1.BlockedForbidden, Object: object, Message: first.Refusal.Message}
	}
	return &decide.Problem{Reason: first.Refusal.Reason, Object: object,
		Message: fmt.Sprintf("the API server refused %d of csv-cleaner's requests on operands (first: to %s %s): %s; %s",
			len(refused), verb, object, first.Refusal.Message, first.Refusal.Advice())}
}

// Path is namespace/name, or name for a cluster-scoped object.
func Path(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
