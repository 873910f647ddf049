package faultproxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// TestFaultsAsClientGoSeesThem sends requests through the proxy to a
// stand-in API server and checks what client-go returns for each fault:
// every one is an error transient.Is retries, and a lost reply's write
// reached the server.
func TestFaultsAsClientGoSeesThem(t *testing.T) {
	deletes := 0
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes++
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer upstream.Close()
	p, err := Start(&rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cs := kubernetes.NewForConfigOrDie(p.Config)
	del := func() error {
		return cs.CoreV1().ConfigMaps("default").Delete(context.Background(), "x", metav1.DeleteOptions{})
	}
	for _, fault := range []Kind{Refused500, Refused503, LostReply500, LostReplyReset} {
		before := deletes
		p.Add(Rule{Match: func(*http.Request) bool { return true }, Fault: fault, Times: 1})
		err := del()
		if !transient.Is(err) {
			t.Errorf("%s: client-go returned %v (%T), which transient.Is does not retry", fault, err, err)
		}
		t.Logf("%s: %v", fault, err)
		lost := fault == LostReply500 || fault == LostReplyReset
		if got := deletes - before; lost && got != 1 || !lost && got != 0 {
			t.Errorf("%s: the server saw %d deletes", fault, got)
		}
	}
	if err := p.Check(Refused500, Refused503, LostReply500, LostReplyReset); err != nil {
		t.Error(err)
	}
	if err := p.Check(Delayed); err == nil {
		t.Error("Check passed for a kind never injected")
	}
	// A 429 with Retry-After is waited for and retried by client-go itself.
	p.Add(Rule{Match: func(*http.Request) bool { return true }, Fault: Refused429, Times: 1})
	if err := del(); err != nil && !apierrors.IsTooManyRequests(err) {
		t.Errorf("429: %v", err)
	}
}
