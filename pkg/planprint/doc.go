// Package planprint prints what `csv-cleaner plan` found (a cleanup.DryRun)
// for a person (Table: the verdict, one line per object, what could not be
// read, what the API server would refuse, the notes, the totals) or for a
// program (JSON). It only formats: it reads nothing from the cluster and
// decides nothing; the dry run is the engine's (pkg/cleanup), the
// decisions pkg/decide's.
package planprint
