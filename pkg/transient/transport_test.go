package transient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTransport sends reads, a watch and a write to a stand-in server that
// answers with the given statuses in turn, and checks what is retried and
// what the caller gets.
func TestTransport(t *testing.T) {
	for name, tc := range map[string]struct {
		method, query string
		statuses      []int
		wantStatus    int
		wantTries     int
	}{
		"a read retried past 500, 503 and 429":     {"GET", "", []int{500, 503, 429, 200}, 200, 4},
		"a read that keeps failing gets the last":  {"GET", "", []int{500, 502, 504, 503, 200}, 503, 4},
		"a read refused for good is not retried":   {"GET", "", []int{403}, 403, 1},
		"a read of nothing is not retried":         {"GET", "", []int{404}, 404, 1},
		"a watch passes through":                   {"GET", "watch=true", []int{500, 200}, 500, 1},
		"a write passes through (Client has them)": {"PATCH", "", []int{500, 200}, 500, 1},
	} {
		t.Run(name, func(t *testing.T) {
			tries := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				status := 200
				if tries < len(tc.statuses) {
					status = tc.statuses[tries]
				}
				tries++
				w.WriteHeader(status)
				_, _ = io.WriteString(w, http.StatusText(status))
			}))
			defer srv.Close()
			retries := 0
			r := fast
			r.OnRetry = func(string, error) { retries++ }
			c := &http.Client{Transport: r.Transport(http.DefaultTransport)}
			req, _ := http.NewRequest(tc.method, srv.URL+"/apis/example.com/v1/widgets?"+tc.query, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || string(body) != http.StatusText(tc.wantStatus) {
				t.Errorf("got %d %q, want %d with its body", resp.StatusCode, body, tc.wantStatus)
			}
			if tries != tc.wantTries || retries != tc.wantTries-1 {
				t.Errorf("the server saw %d tries and %d retries were reported; want %d tries", tries, retries, tc.wantTries)
			}
		})
	}
}

// TestTransportStoreReadError: a 500 that says the API server cannot read
// objects from its storage (a conversion webhook that fails) comes back the
// same until someone acts: it is not retried, and the caller reads its body.
func TestTransportStoreReadError(t *testing.T) {
	for _, status := range []string{
		`{"kind":"Status","status":"Failure","reason":"StorageReadError","code":500}`,
		"k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12\x1a\x12\x07Failure\x1a\x00\"\x10StorageReadError(\xf4\x03",                                                   // protobuf
		`{"kind":"Status","status":"Failure","message":"Internal error occurred: StorageError: corrupt object, Code: 7","reason":"InternalError","code":500}`, // a GET's
	} {
		testStoreReadError(t, status)
	}
}

func testStoreReadError(t *testing.T, status string) {
	t.Helper()
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		tries++
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, status)
	}))
	defer srv.Close()
	c := &http.Client{Transport: fast.Transport(http.DefaultTransport)}
	resp, err := c.Get(srv.URL + "/apis/example.com/v1/widgets?limit=500")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || string(body) != status || tries != 1 {
		t.Errorf("got %d %q after %d tries, want the 500 and its body after 1", resp.StatusCode, body, tries)
	}
}
