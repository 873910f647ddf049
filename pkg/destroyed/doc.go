// Package destroyed is the record of what an uninstall destroyed: written
// by the backup gate beside the verified Backup, read by the undo, maybe a
// year later by a newer csv-cleaner. Record is its versioned shape; Encode
// writes today's version, Decode reads it and every earlier one and refuses
// a later one.
//
// It must not change the meaning of a field of a version once written:
// a change a reader would misread takes a new version and a reader of it.
package destroyed
