package destroyed

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// written is the record that testdata/v1.json holds: what the gate of
// csv-cleaner's first versioned record wrote for an uninstall of one
// Widget with a Secret and a claim.
func written() *Record {
	widget := decide.Held{Group: "example.com", Kind: "Widget", Resource: "widgets.example.com", Namespace: "apps", Name: "db1"}
	secret := decide.Held{Kind: "Secret", Resource: "secrets", Namespace: "apps", Name: "db1-auth"}
	claim := decide.Held{Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Namespace: "apps", Name: "db1-data"}
	yes := true
	owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "db1", UID: "w-1", Controller: &yes, BlockOwnerDeletion: &yes}
	return &Record{
		Version: 1, Owner: decide.Owner{Kind: decide.KindCSV, Namespace: "operators", Name: "widgets.v1.0.0"},
		Backup: "csv-cleaner-widgets-v1-0-0-0123456789", Verified: metav1.NewTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)),
		Deleted:    []decide.Held{widget},
		Dependents: []decide.Held{secret, claim},
		Volumes:    []decide.Volume{{Claim: claim, VolumeName: "pv-db1", Driver: "hostpath.csi.k8s.io", SnapshotClass: "csi-hostpath", Snapshot: true}},
		Origins: []decide.Origin{{Object: widget, UID: "w-1", Labels: map[string]string{"tier": "prod"}},
			{Object: secret, UID: "s-1", Owners: []metav1.OwnerReference{owner}}, {Object: claim, UID: "c-1", Owners: []metav1.OwnerReference{owner}}},
		Versions: map[string]string{"Widget.example.com": "v1"},
	}
}

// same reports whether got is want: metav1.Time reads back in the local
// zone, so times are compared as instants.
func same(got, want *Record) bool {
	if !got.Verified.Equal(&want.Verified) {
		return false
	}
	g := *got
	g.Verified = want.Verified
	return reflect.DeepEqual(&g, want)
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if _, err := z.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadsWhatWasWritten: a record as version 1 wrote it (testdata, kept
// as it was written: never regenerate it), and one written before records
// had a version, read back as they were written by every later csv-cleaner.
func TestReadsWhatWasWritten(t *testing.T) {
	v1, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	unversioned := bytes.Replace(v1, []byte(`"version":1,`), nil, 1)
	if bytes.Equal(unversioned, v1) {
		t.Fatal("testdata/v1.json has no version")
	}
	for name, b := range map[string][]byte{"version 1": v1, "before versions": unversioned} {
		got, err := Decode(gz(t, b), 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := written(); !same(got, want) {
			t.Errorf("%s reads as\n%+v\nwant\n%+v", name, got, want)
		}
	}
}

// TestRoundTrip: what Encode writes, Decode reads back, at CurrentVersion.
func TestRoundTrip(t *testing.T) {
	r := written()
	r.Version = 0
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := written(); got.Version != CurrentVersion || !same(got, want) {
		t.Errorf("round trip: %+v, want %+v", got, want)
	}
	raw, err := gunzip(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"owner":"CSV operators/widgets.v1.0.0"`, `"ownerKind":"ClusterServiceVersion"`, `"ownerNamespace":"operators"`, `"ownerName":"widgets.v1.0.0"`} {
		if !bytes.Contains(raw, []byte(key)) {
			t.Errorf("the record names its owner without %s, which every csv-cleaner since version 1 reads: %s", key, raw)
		}
	}
}

// TestRefusesALaterVersion: a newer csv-cleaner's record is refused, with
// why, never read as this version's.
func TestRefusesALaterVersion(t *testing.T) {
	_, err := Decode(gz(t, []byte(`{"version":2,"owner":"CSV a/b","deleted":[]}`)), 1<<20)
	if err == nil || !strings.Contains(err.Error(), "version 2, by a newer csv-cleaner") {
		t.Fatalf("a version 2 record: %v", err)
	}
	if _, err := Decode([]byte("not gzip"), 1<<20); err == nil {
		t.Fatal("a record that is not gzip read without an error")
	}
}

// gunzip is the JSON of a record Encode wrote.
func gunzip(b []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}
