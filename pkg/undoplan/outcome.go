package undoplan

// Outcome is what an undo did, as an Undo keeps it for `csv-cleaner undo`
// to print and as the command prints it for a program (these keys).
type Outcome struct {
	// Backup is the Backup restored from (namespace/name), and From where it was found.
	Backup string `json:"backup"`
	From   string `json:"from"`
	// Restore is the Restore made, "" when nothing was missing.
	Restore string `json:"restore,omitempty"`
	// RestorePhase is the Restore's phase when it ended, or as last read.
	RestorePhase string `json:"restorePhase,omitempty"`
	// Attempt numbers the Restore: 2 is the one made after the first failed.
	Attempt int `json:"attempt,omitempty"`
	// Rows are the objects the undo restores and where it left each.
	Rows []Row `json:"rows"`
}

// Missing counts the objects still missing, not known to be there, or
// restored with a problem.
func (o *Outcome) Missing() int {
	n := 0
	for _, row := range o.Rows {
		if row.NotBack() {
			n++
		}
	}
	return n
}
