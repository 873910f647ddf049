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
