// Package undo undoes an uninstall that csv-cleaner gated on a verified
// Velero backup (`csv-cleaner undo`): it finds the Backup (from the
// uninstall's record, or from the Backups' own labels once the record is
// gone), reads what the uninstall destroyed (kept beside the Backup when
// it was verified), checks that the operator is installed again and serves
// its CRDs, restores with one Velero Restore exactly what was destroyed and
// is missing now (the objects, their dependents and their volumes' data,
// never the old install's cluster RBAC and webhook configurations),
// follows it, and checks that everything came back.
//
// It decides nothing about an uninstall and writes nothing but the
// Restore and its resource policy; run again, it finds nothing missing and
// writes nothing.
package undo
