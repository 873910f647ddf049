package velero

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDownload reads resource lists as Velero's object storage serves them.
func TestDownload(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    []byte
		want    map[string][]string
		wantErr string
	}{
		{name: "gzipped JSON, no Content-Encoding", status: http.StatusOK,
			body: gzipped(t, `{"example.com/v1/Widget":["a/w1","b/w2"],"rbac.authorization.k8s.io/v1/ClusterRole":["r"]}`),
			want: map[string][]string{"example.com/v1/Widget": {"a/w1", "b/w2"}, "rbac.authorization.k8s.io/v1/ClusterRole": {"r"}}},
		{name: "not gzip", status: http.StatusOK, body: []byte(`{"v1/ConfigMap":["a/c"]}`), wantErr: "not gzip"},
		{name: "not a list", status: http.StatusOK, body: gzipped(t, `["a/w1"]`), wantErr: "reading it"},
		{name: "cut short", status: http.StatusOK, body: gzipped(t, `{"example.com/v1/Widget":["a/w1"`), wantErr: "cut short"},
		{name: "expired URL", status: http.StatusForbidden, body: []byte("Request has expired"), wantErr: "403"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.WriteHeader(tt.status)
				_, _ = w.Write(tt.body)
			}))
			defer srv.Close()
			got := map[string][]string{}
			err := download(context.Background(), srv.Client(), srv.URL+"/list", &got)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("download = %v, %v; want an error with %q", got, err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("download: %v", err)
			case tt.wantErr == "" && !reflect.DeepEqual(got, tt.want):
				t.Errorf("download = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestListRequestName keeps one DownloadRequest name for five minutes, so
// that a request asked for while the Backup runs is the one read once it
// is Completed, and a new one after, while the old one's URL still works.
func TestListRequestName(t *testing.T) {
	base := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC) // a slot's start
	tests := []struct {
		name string
		a, b time.Time
		same bool
	}{
		{"same second", base, base, true},
		{"within the slot", base, base.Add(4*time.Minute + 59*time.Second), true},
		{"the next slot", base.Add(4 * time.Minute), base.Add(5 * time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := listRequestName("csv-cleaner-x-1", tt.a), listRequestName("csv-cleaner-x-1", tt.b)
			if (a == b) != tt.same {
				t.Errorf("listRequestName at %s = %q, at %s = %q; same = %v, want %v", tt.a, a, tt.b, b, a == b, tt.same)
			}
			if !strings.HasPrefix(a, "csv-cleaner-x-1-list-") {
				t.Errorf("listRequestName = %q, want it to begin with the Backup's name", a)
			}
		})
	}
}

// TestSplit cuts a record into parts a ConfigMap holds, none empty but the
// one of an empty record, and joined they are the record.
func TestSplit(t *testing.T) {
	for _, n := range []int{0, 1, 899, 900, 901, 2700} {
		b := bytes.Repeat([]byte{'x'}, n)
		parts := split(b, 900)
		var joined []byte
		for i, p := range parts {
			if len(p) > 900 || len(p) == 0 && n > 0 || i < len(parts)-1 && len(p) != 900 {
				t.Errorf("%d bytes: part %d has %d", n, i, len(p))
			}
			joined = append(joined, p...)
		}
		if !bytes.Equal(joined, b) || len(parts) != max(1, (n+899)/900) {
			t.Errorf("%d bytes: %d parts, joined %d bytes", n, len(parts), len(joined))
		}
	}
}
