package decide

import (
	"strings"
	"testing"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
)

// TestJudgeUnread decides whether objects nobody read may be owned by what
// an uninstall destroys, as the garbage collector reads ownerReferences: a
// namespaced owner in its dependent's namespace, a cluster-scoped owner
// anywhere.
func TestJudgeUnread(t *testing.T) {
	operand := Held{Group: "example.com", Kind: "Widget", Resource: "widgets", Namespace: "a", Name: "w1"}
	secret := Held{Kind: "Secret", Resource: "secrets", Namespace: "b", Name: "w1-creds"}
	role := Held{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Resource: "clusterroles", Name: "op-role"}
	otel := Held{Group: "opentelemetry.io", Kind: "OpenTelemetryCollector", Resource: "opentelemetrycollectors", Namespace: "otel", Name: "c1"}
	conversion := `conversion webhook for opentelemetry.io/v1alpha1, Kind=OpenTelemetryCollector failed: connection refused`
	storage := func(ns []string, objs ...Held) UnreadKind {
		return UnreadKind{Resource: "opentelemetrycollectors.opentelemetry.io", Reason: UnreadStorage, Namespaced: true, Namespaces: ns, Objects: objs, Error: conversion}
	}
	// read at their stored version: nobody's, and one a deleted operand owns
	stranded := UnreadKind{Resource: "opentelemetrycollectors.opentelemetry.io", Reason: UnreadStorage, Namespaced: true, Stranded: 2, Error: conversion}
	strandedDependent := Node{Held: Held{Group: "opentelemetry.io", Kind: "OpenTelemetryCollector", Resource: "opentelemetrycollectors", Namespace: "a", Name: "w1-collector"}, Stranded: true}
	readDependent := strandedDependent
	readDependent.Stranded = false
	tests := []struct {
		name       string
		unread     UnreadKind
		destroyed  []Held
		dependents []Node
		concerns   bool
		reason     string // the problem's, "" for none
		says       string
	}{
		{
			name:       "read at their stored version, none of them a dependent: it goes on, even beside a cluster-scoped deletion",
			unread:     stranded,
			destroyed:  []Held{operand, role},
			dependents: []Node{readDependent},
			says:       "2 objects of opentelemetrycollectors.opentelemetry.io could not be read at the version the garbage collector reads",
		},
		{
			name:       "read at their stored version, one a dependent: blocks, naming it",
			unread:     stranded,
			destroyed:  []Held{operand, strandedDependent.Held},
			dependents: []Node{strandedDependent},
			concerns:   true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
			says: "1 object of opentelemetrycollectors.opentelemetry.io that the garbage collector deletes with the uninstall's deletions (a/w1-collector)",
		},
		{
			name:      "objects in a namespace where the uninstall destroys nothing: it goes on",
			unread:    storage([]string{"otel"}, otel),
			destroyed: []Held{operand, secret},
			says:      "1 object of opentelemetrycollectors.opentelemetry.io in namespace otel could not be read (otel/c1) (StoreReadError: conversion webhook for opentelemetry.io/v1alpha1",
		},
		{
			name:      "objects in a namespace where it deletes an operand: blocks, saying how to resolve it",
			unread:    storage([]string{"a"}, Held{Namespace: "a", Name: "c2"}),
			destroyed: []Held{operand},
			concerns:  true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
			says: "set its spec.conversion to None",
		},
		{
			name:      "objects in a namespace where only a dependent goes: blocks",
			unread:    storage([]string{"b"}),
			destroyed: []Held{operand, secret},
			concerns:  true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
		},
		{
			name:      "a cluster-scoped object destroyed may own objects in every namespace: blocks",
			unread:    storage([]string{"otel"}, otel),
			destroyed: []Held{operand, role},
			concerns:  true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
		},
		{
			name:      "an uninstall that destroys nothing is concerned by nothing",
			unread:    UnreadKind{Resource: "v1beta1.example.io", Reason: UnreadUnavailable, Namespaced: true, Anywhere: true, Error: "the server is currently unable to handle the request"},
			destroyed: nil,
			says:      "it destroys nothing",
		},
		{
			name:      "an API that is down, where its objects are not known: anything destroyed may own them",
			unread:    UnreadKind{Resource: "every kind of example.io/v1beta1", Reason: UnreadUnavailable, Namespaced: true, Anywhere: true, Error: "the server is currently unable to handle the request"},
			destroyed: []Held{operand},
			concerns:  true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
			says: "bring its API back",
		},
		{
			name:      "a cluster-scoped kind nobody reads, and an uninstall of namespaced objects only: it goes on",
			unread:    UnreadKind{Resource: "clusterthings.example.io", Reason: UnreadStorage, Namespaces: []string{""}, Error: "data is not decryptable"},
			destroyed: []Held{operand, secret},
			says:      "only one owns a cluster-scoped object",
		},
		{
			name:      "a cluster-scoped kind nobody reads, and a cluster-scoped object destroyed: blocks",
			unread:    UnreadKind{Resource: "clusterthings.example.io", Reason: UnreadStorage, Namespaces: []string{""}, Error: "data is not decryptable"},
			destroyed: []Held{role},
			concerns:  true, reason: cleanupv1alpha1.BlockedDependentsUnreadable,
			says: "encryption key",
		},
		{
			name:      "a kind csv-cleaner may not list: the garbage collector may, so it blocks as Forbidden",
			unread:    UnreadKind{Resource: "secrets", Reason: UnreadForbidden, Namespaced: true, Anywhere: true, Error: "forbidden"},
			destroyed: []Held{operand},
			concerns:  true, reason: cleanupv1alpha1.BlockedForbidden,
			says: "grant csv-cleaner list on secrets",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := JudgeUnread(UnreadInput{Kinds: []UnreadKind{tt.unread}, Dependents: tt.dependents, Reach: ReachOf(tt.destroyed)})
			if len(got) != 1 || got[0].Concerns != tt.concerns {
				t.Fatalf("concerns = %v, want %v (%+v)", got[0].Concerns, tt.concerns, got)
			}
			if tt.says != "" && !strings.Contains(got[0].Message, tt.says) {
				t.Errorf("message %q does not say %q", got[0].Message, tt.says)
			}
			switch {
			case tt.reason == "" && problem != nil:
				t.Errorf("blocks with %+v", problem)
			case tt.reason != "" && (problem == nil || problem.Reason != tt.reason):
				t.Errorf("problem %+v, want reason %s", problem, tt.reason)
			case problem != nil && !strings.Contains(problem.Object, tt.unread.Resource):
				t.Errorf("the problem names %q, not the kind %s", problem.Object, tt.unread.Resource)
			}
		})
	}
}

// TestJudgeUnreadForbiddenFirst: with both, a missing right blocks first,
// naming every kind that blocks.
func TestJudgeUnreadForbiddenFirst(t *testing.T) {
	got, problem := JudgeUnread(UnreadInput{Kinds: []UnreadKind{
		{Resource: "gadgets.example.com", Reason: UnreadStorage, Namespaced: true, Anywhere: true, Error: "x"},
		{Resource: "secrets", Reason: UnreadForbidden, Namespaced: true, Anywhere: true},
	}, Reach: Reach{Namespaces: map[string]bool{"a": true}}})
	if problem == nil || problem.Reason != cleanupv1alpha1.BlockedForbidden {
		t.Fatalf("problem %+v, want Forbidden first", problem)
	}
	if !strings.Contains(problem.Object, "secrets") || !strings.Contains(problem.Object, "gadgets.example.com") {
		t.Errorf("the problem names %q, not both kinds", problem.Object)
	}
	if !got[0].Concerns || !got[1].Concerns {
		t.Errorf("both concern: %+v", got)
	}
}
