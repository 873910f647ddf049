// Package bundle checks what csv-cleaner ships to OLM: the generated bundle
// (bundle/) with operator-framework/api's own validators, and the
// file-based catalog (catalog/) with opm.
package bundle
