package decide

import "fmt"

// IdentityDenials is what one identity csv-cleaner may run as was denied:
// one Problem per kind (Object names the kind).
type IdentityDenials struct {
	// Identity names it for a person ("ServiceAccount ns/name (ClusterRoleBinding b)").
	Identity string
	// Decisive: its groups are known, so a denial is the API server's last
	// word; a user whose groups are unknown may hold the right through one.
	Decisive bool
	Denied   []Problem
}

// JudgeDenials decides what a plan foresees of rights checked for several
// identities: a kind every decisive identity is denied is a refusal (the
// first one's problem); a denial of some, or of one whose groups are unknown,
// is a note; with no decisive identity, nothing is refused.
func JudgeDenials(ids []IdentityDenials) (refusals []Problem, notes []string) {
	decisive := 0
	deniedTo := map[string]int{}
	first := map[string]Problem{}
	var order []string
	for _, id := range ids {
		if !id.Decisive {
			continue
		}
		decisive++
		for _, p := range id.Denied {
			if _, ok := first[p.Object]; !ok {
				first[p.Object] = p
				order = append(order, p.Object)
			}
			deniedTo[p.Object]++
		}
	}
	for _, kind := range order {
		if deniedTo[kind] == decisive {
			refusals = append(refusals, first[kind])
		}
	}
	for _, id := range ids {
		for _, p := range id.Denied {
			if id.Decisive && deniedTo[p.Object] == decisive {
				continue
			}
			why := "another identity csv-cleaner runs as may"
			if !id.Decisive {
				why = "its groups are unknown, and one of them may grant it"
			}
			notes = append(notes, fmt.Sprintf("%s lacks a right (%s): %s", id.Identity, why, p.Message))
		}
	}
	return refusals, notes
}
