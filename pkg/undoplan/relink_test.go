package undoplan

import (
	"slices"
	"testing"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestRelink writes owners again as they were, each restored owner by its
// new UID, and never a UID that is not there.
func TestRelink(t *testing.T) {
	yes := new(bool)
	*yes = true
	held := func(kind, name string) decide.Held {
		return decide.Held{Group: "example.com", Kind: kind, Resource: kind + "s", Namespace: "a", Name: name}
	}
	ref := func(kind, name string, uid types.UID, controller bool) metav1.OwnerReference {
		r := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: kind, Name: name, UID: uid}
		if controller {
			r.Controller, r.BlockOwnerDeletion = yes, yes
		}
		return r
	}
	db := held("Database", "db")
	sts := held("StatefulSet", "db")
	claim := held("PersistentVolumeClaim", "data-db-0")
	secret := held("Secret", "db-password")
	shared := held("ConfigMap", "shared")
	origins := []decide.Origin{
		{Object: db, UID: "db-then"},
		{Object: sts, UID: "sts-then", Owners: []metav1.OwnerReference{ref("Database", "db", "db-then", true)}},
		{Object: claim, UID: "claim-then", Owners: []metav1.OwnerReference{ref("StatefulSet", "db", "sts-then", true)}},
		{Object: secret, UID: "secret-then", Owners: []metav1.OwnerReference{ref("Database", "db", "db-then", true)}},
		// owned by the restored database and by a Team the uninstall never destroyed
		{Object: shared, UID: "shared-then", Owners: []metav1.OwnerReference{ref("Database", "db", "db-then", false), ref("Team", "blue", "team-uid", false)}},
	}
	now := map[decide.Held]Live{db: {UID: "db-now"}, sts: {UID: "sts-now"}, claim: {UID: "claim-now"}, secret: {UID: "secret-now"}, shared: {UID: "shared-now"}}
	teamThere := func(r metav1.OwnerReference, _ string) bool { return r.UID == "team-uid" }
	linkOf := func(links []Link, h decide.Held) Link {
		for _, l := range links {
			if l.Object == h {
				return l
			}
		}
		t.Fatalf("no link of %s in %+v", h, links)
		return Link{}
	}
	teamGone := func(metav1.OwnerReference, string) bool { return false }

	t.Run("chains followed, owners first, new UIDs, flags as they were", func(t *testing.T) {
		links := Relink(RelinkInput{Origins: origins, Relink: []decide.Held{claim, shared, secret, sts, db}, Now: now, Present: teamThere})
		var order []string
		for _, l := range links {
			order = append(order, l.Object.Kind)
		}
		if want := []string{"ConfigMap", "Secret", "StatefulSet", "PersistentVolumeClaim"}; !slices.Equal(order, want) {
			t.Fatalf("order %v, want %v (the claim after its StatefulSet)", order, want)
		}
		claimLink := links[3]
		if len(claimLink.Owners) != 1 || claimLink.Owners[0].UID != "sts-now" || claimLink.Owners[0].Controller != yes || claimLink.Owners[0].BlockOwnerDeletion != yes {
			t.Errorf("claim's owners %+v, want the StatefulSet by its new UID, controller and blocking", claimLink.Owners)
		}
		sharedLink := links[0]
		if got := []types.UID{sharedLink.Owners[0].UID, sharedLink.Owners[1].UID}; !slices.Equal(got, []types.UID{"db-now", "team-uid"}) || sharedLink.Owners[0].Controller != nil {
			t.Errorf("shared's owners %+v, want the database's new UID and the Team as it was, not controllers", sharedLink.Owners)
		}
	})
	t.Run("an owner neither restored nor there is left out, and said", func(t *testing.T) {
		partial := map[decide.Held]Live{sts: {UID: "sts-now"}, claim: {UID: "claim-now"}, shared: {UID: "shared-now"}}
		links := Relink(RelinkInput{Origins: origins, Relink: []decide.Held{sts, claim, shared}, Now: partial, Present: teamGone})
		for _, l := range links {
			for _, o := range l.Owners {
				if o.UID == "db-then" || o.UID == "team-uid" {
					t.Errorf("%s names %s, whose UID is not there", l.Object, o.UID)
				}
			}
		}
		if l := linkOf(links, sts); len(l.Owners) != 0 || !slices.Equal(l.LeftOut, []string{"Database.example.com a/db: not restored"}) {
			t.Errorf("the StatefulSet's link %+v, want its database left out as not restored", l)
		}
		if l := linkOf(links, shared); !slices.Equal(l.LeftOut, []string{"Database.example.com a/db: not restored", "Team.example.com a/blue: gone"}) {
			t.Errorf("shared's link %+v, want both owners left out", l)
		}
	})
	t.Run("an owner there already (linked before, or the operator adopted it) is not written twice: linked, nothing to write", func(t *testing.T) {
		adopted := map[decide.Held]Live{db: {UID: "db-now"}, secret: {UID: "secret-now", Owners: []metav1.OwnerReference{ref("Database", "db", "db-now", true)}}}
		links := Relink(RelinkInput{Origins: origins, Relink: []decide.Held{secret}, Now: adopted, Present: teamThere})
		if len(links) != 1 || links[0].Write || len(links[0].Owners) != 1 || !slices.Equal(links[0].Linked, []string{"Database.example.com a/db"}) {
			t.Errorf("links %+v, want the database linked already, nothing to write", links)
		}
	})
	t.Run("a controller reference where another controller owns the object now is left out: one controller at most", func(t *testing.T) {
		taken := map[decide.Held]Live{db: {UID: "db-now"}, secret: {UID: "secret-now", Owners: []metav1.OwnerReference{ref("Operator", "op", "op-uid", true)}}}
		links := Relink(RelinkInput{Origins: origins, Relink: []decide.Held{secret}, Now: taken, Present: teamThere})
		if len(links) != 1 || len(links[0].Owners) != 1 || !slices.Equal(links[0].LeftOut, []string{"Database.example.com a/db: another controller owns it now"}) {
			t.Errorf("links %+v", links)
		}
	})
	t.Run("objects that own each other are linked, in no particular order", func(t *testing.T) {
		x, y := held("ConfigMap", "x"), held("ConfigMap", "y")
		cyc := []decide.Origin{{Object: x, UID: "x", Owners: []metav1.OwnerReference{ref("ConfigMap", "y", "y", false)}}, {Object: y, UID: "y", Owners: []metav1.OwnerReference{ref("ConfigMap", "x", "x", false)}}}
		links := Relink(RelinkInput{Origins: cyc, Relink: []decide.Held{x, y}, Now: map[decide.Held]Live{x: {UID: "x2"}, y: {UID: "y2"}}, Present: teamGone})
		if len(links) != 2 || linkOf(links, x).Owners[0].UID != "y2" || linkOf(links, y).Owners[0].UID != "x2" {
			t.Errorf("links %+v", links)
		}
	})
	t.Run("a restored owner's reference names the version it is served at now: an upgrade may have dropped the one the uninstall saw", func(t *testing.T) {
		upgraded := map[decide.Held]Live{db: {UID: "db-now", APIVersion: "example.com/v2"}, secret: {UID: "secret-now"}}
		links := Relink(RelinkInput{Origins: origins, Relink: []decide.Held{secret}, Now: upgraded, Present: teamThere})
		if len(links) != 1 || len(links[0].Owners) != 1 || links[0].Owners[0].APIVersion != "example.com/v2" || links[0].Owners[0].UID != "db-now" {
			t.Fatalf("links %+v, want the database at example.com/v2 by its new UID", links)
		}
		if l := linkOf(Relink(RelinkInput{Origins: origins, Relink: []decide.Held{secret}, Now: now, Present: teamThere}), secret); l.Owners[0].APIVersion != "example.com/v1" {
			t.Errorf("with no version read now, the reference keeps its own: %+v", l.Owners)
		}
	})
	t.Run("the owners an undo looks up are those it did not destroy, once each", func(t *testing.T) {
		got := OwnersToLookUp(origins, []decide.Held{shared, secret, shared})
		if len(got) != 1 || got[0].Ref.UID != "team-uid" || got[0].Namespace != "a" {
			t.Errorf("lookups %+v, want the Team once", got)
		}
	})
}
