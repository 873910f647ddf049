package undo

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/undoplan"
	"github.com/csv-cleaner/csv-cleaner/pkg/velero"
)

// An Undo keeps its Outcome, every object's row, in a ConfigMap of
// Velero's namespace that it owns (status.rows names it): the status
// holds the counts and the first rows not back, and a status of thousands
// of rows would near the API server's limit on one object. rowsKey is its
// key, gzipped JSON (at most velero.ConfigMapBytes); rowsVersion the shape
// it is written in; maxRowsJSON the most JSON read back.
const (
	rowsKey     = "outcome.json.gz"
	rowsVersion = 1
	maxRowsJSON = 64 << 20
)

// ErrRowsTooLarge: the rows do not fit a ConfigMap; the Undo keeps none.
var ErrRowsTooLarge = errors.New("the undo's rows do not fit a ConfigMap")

// RowsName is the ConfigMap that keeps the rows of the Undo named undo
// (253 characters at most, as a ConfigMap's name).
func RowsName(undo string) string {
	const suffix = "-rows"
	if len(undo)+len(suffix) > 253 {
		undo = strings.TrimRight(undo[:253-len(suffix)], ".-")
	}
	return undo + suffix
}

// keptOutcome is what the ConfigMap holds.
type keptOutcome struct {
	Version int `json:"version"`
	undoplan.Outcome
}

// KeepRows writes what the undo u came to into its rows ConfigMap, in the
// Velero namespace of its Backup, owned by u (deleting the Undo deletes
// it), and returns its namespace/name for status.rows. Written again, it
// is replaced. An Outcome too large for a ConfigMap is ErrRowsTooLarge.
func KeepRows(ctx context.Context, c client.Client, u *cleanupv1alpha1.Undo, o *undoplan.Outcome) (string, error) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if err := errors.Join(json.NewEncoder(z).Encode(keptOutcome{Version: rowsVersion, Outcome: *o}), z.Close()); err != nil {
		return "", fmt.Errorf("writing the undo's rows: %w", err)
	}
	if buf.Len() > velero.ConfigMapBytes {
		return "", fmt.Errorf("%w (%d rows, %d bytes gzipped)", ErrRowsTooLarge, len(o.Rows), buf.Len())
	}
	namespace, _, _ := strings.Cut(o.Backup, "/")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: RowsName(u.Name),
		Labels:          map[string]string{velero.ManagedByLabel: velero.ManagedBy},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: cleanupv1alpha1.GroupVersion.String(), Kind: "Undo", Name: u.Name, UID: u.UID}}},
		BinaryData: map[string][]byte{rowsKey: buf.Bytes()}}
	v := velero.Client{Live: c, Writer: c, Namespace: namespace}
	if err := v.Put(ctx, cm); err != nil {
		return "", fmt.Errorf("keeping the undo's rows in ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return namespace + "/" + cm.Name, nil
}

// ReadRows reads the Outcome an Undo kept (status.rows, namespace/name);
// nil when it kept none (a csv-cleaner older than this one ran it, or its
// rows did not fit a ConfigMap).
func ReadRows(ctx context.Context, c client.Reader, u *cleanupv1alpha1.Undo) (*undoplan.Outcome, error) {
	namespace, name, ok := strings.Cut(u.Status.Rows, "/")
	if !ok {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("the rows of Undo %s are gone (ConfigMap %s was deleted): run the undo again, it reports every object", u.Name, u.Status.Rows)
	} else if err != nil {
		return nil, fmt.Errorf("reading the rows of Undo %s (ConfigMap %s): %w", u.Name, u.Status.Rows, err)
	}
	kept, err := decodeRows(cm.BinaryData[rowsKey])
	if err != nil {
		return nil, fmt.Errorf("reading the rows of Undo %s (ConfigMap %s): %w", u.Name, u.Status.Rows, err)
	}
	return kept, nil
}

// decodeRows reads what KeepRows wrote; a later version (a newer
// csv-cleaner's) is refused.
func decodeRows(gz []byte) (*undoplan.Outcome, error) {
	z, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(z, maxRowsJSON))
	if err != nil {
		return nil, err
	}
	var kept keptOutcome
	if err := json.Unmarshal(raw, &kept); err != nil {
		return nil, err
	}
	if kept.Version > rowsVersion {
		return nil, fmt.Errorf("written at version %d, by a newer csv-cleaner than this one (which reads up to %d)", kept.Version, rowsVersion)
	}
	return &kept.Outcome, nil
}
