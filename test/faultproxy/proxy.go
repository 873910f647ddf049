package faultproxy

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kind is a kind of fault.
type Kind string

// The faults the proxy injects.
const (
	// Refused500 answers 500 InternalError "etcdserver: request timed out" without forwarding.
	Refused500 Kind = "refused-500"
	// Refused503 answers 503 ServiceUnavailable without forwarding.
	Refused503 Kind = "refused-503"
	// Refused429 answers 429 TooManyRequests with Retry-After: 1 without forwarding.
	Refused429 Kind = "refused-429"
	// LostReply500 forwards a DELETE or PATCH, then answers 500: it was done, the client does not know.
	LostReply500 Kind = "lost-reply-500"
	// LostReplyReset forwards a DELETE or PATCH, then resets the stream.
	LostReplyReset Kind = "lost-reply-reset"
	// Delayed holds a request up to Rates.MaxDelay before forwarding it.
	Delayed Kind = "delayed"
	// WatchCut ends a watch Rates.CutWatchAfter after it opened.
	WatchCut Kind = "watch-cut"
)

// RandomKinds are the kinds Rates inject.
var RandomKinds = []Kind{Refused500, Refused503, Refused429, LostReply500, LostReplyReset, Delayed, WatchCut}

// Rates say how often each fault strikes at random; the zero Rates
// forwards everything untouched.
type Rates struct {
	// Refused is the share of requests refused, split evenly among 500, 503 and 429.
	Refused float64
	// LostReply is the share of DELETEs and PATCHes done and then answered
	// 500 or reset, evenly.
	LostReply float64
	// Delayed is the share of requests held up to MaxDelay.
	Delayed  float64
	MaxDelay time.Duration
	// CutWatchAfter, when its upper bound is set, cuts every watch after a
	// time drawn between its two bounds.
	CutWatchAfter [2]time.Duration
}

// Degraded are the rates issue 26's harness used: 5 % of requests refused
// with each of 500, 503 and 429, 5 % of DELETEs and PATCHes done with
// their reply lost, 20 % delayed by up to 300 ms, and every watch cut 5 to
// 15 s after it opens.
var Degraded = Rates{Refused: 0.15, LostReply: 0.05, Delayed: 0.2, MaxDelay: 300 * time.Millisecond,
	CutWatchAfter: [2]time.Duration{5 * time.Second, 15 * time.Second}}

// Rule is a targeted fault: the next Times requests that Match meets get Fault.
type Rule struct {
	Match func(*http.Request) bool
	Fault Kind
	Times int
	// Then, when set, runs once a lost reply's request is done upstream and
	// before its reply is lost: a spec kills its client there.
	Then func()
}

// Proxy is a running fault proxy.
type Proxy struct {
	// Config connects a client to the kube-apiserver through the proxy, with
	// the upstream identity (the proxy forwards with it; impersonation
	// headers pass through).
	Config *rest.Config

	srv      *httptest.Server
	upstream *url.URL
	forward  http.RoundTripper
	rp       *httputil.ReverseProxy

	mu       sync.Mutex
	rnd      *rand.Rand
	rates    Rates
	rules    []*Rule
	injected map[Kind]int
	first    Kind // owed's pick
}

// Start starts a proxy on 127.0.0.1 in front of the API server of
// upstream, forwarding with upstream's identity; seed makes its random
// choices repeatable. It forwards untouched until SetRates or Add.
func Start(upstream *rest.Config, seed uint64) (*Proxy, error) {
	forward, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("building the upstream transport: %w", err)
	}
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the upstream host %q: %w", upstream.Host, err)
	}
	p := &Proxy{upstream: target, forward: forward, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), injected: map[Kind]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     forward,
		FlushInterval: -1, // watches stream
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.EnableHTTP2 = true // as a kube-apiserver serves: a reset is a stream's, not a connection's
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.StartTLS()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	p.Config = &rest.Config{Host: p.srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, QPS: upstream.QPS, Burst: upstream.Burst}
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// SetRates changes the random faults from now on.
func (p *Proxy) SetRates(r Rates) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rates = r
}

// Add adds a targeted rule, which takes precedence over the rates; the
// returned func removes it.
func (p *Proxy) Add(r Rule) (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rule := &r
	p.rules = append(p.rules, rule)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.rules = slices.DeleteFunc(p.rules, func(x *Rule) bool { return x == rule })
	}
}

// Injected returns how many faults of each kind the proxy injected.
func (p *Proxy) Injected() map[Kind]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Kind]int, len(p.injected))
	for k, n := range p.injected {
		out[k] = n
	}
	return out
}

// Check is a harness error when a kind of kinds was never injected: a
// spec that meant to test under a fault that did not happen tested nothing.
func (p *Proxy) Check(kinds ...Kind) error {
	got := p.Injected()
	var missing []string
	for _, k := range kinds {
		if got[k] == 0 {
			missing = append(missing, string(k))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("harness error: the fault proxy never injected %s (injected: %v)", strings.Join(missing, ", "), got)
	}
	return nil
}

// choose decides a request's fault ("" for none) and, for a watch, when to cut it.
func (p *Proxy) choose(req *http.Request) (fault Kind, delay, cut time.Duration, then func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writes := req.Method == http.MethodDelete || req.Method == http.MethodPatch
	for i, r := range p.rules {
		if (r.Fault != LostReply500 && r.Fault != LostReplyReset || writes) && r.Match(req) {
			if r.Times--; r.Times <= 0 {
				p.rules = slices.Delete(p.rules, i, i+1)
			}
			p.injected[r.Fault]++
			return r.Fault, 0, 0, r.Then
		}
	}
	rt := p.rates
	if watching(req) && rt.CutWatchAfter[1] > 0 {
		lo, hi := rt.CutWatchAfter[0], rt.CutWatchAfter[1]
		cut = lo + time.Duration(p.rnd.Int64N(int64(hi-lo)+1))
	}
	switch x := p.rnd.Float64(); {
	case p.owed(Refused500, rt.Refused, true), p.owed(Refused503, rt.Refused, true), p.owed(Refused429, rt.Refused, true),
		p.owed(LostReply500, rt.LostReply, writes), p.owed(LostReplyReset, rt.LostReply, writes):
		fault = p.first
	case x < rt.Refused:
		fault = []Kind{Refused500, Refused503, Refused429}[p.rnd.IntN(3)]
	case writes && x < rt.Refused+rt.LostReply:
		fault = []Kind{LostReply500, LostReplyReset}[p.rnd.IntN(2)]
	case x < rt.Refused+rt.LostReply+rt.Delayed && rt.MaxDelay > 0:
		fault, delay = Delayed, time.Duration(p.rnd.Int64N(int64(rt.MaxDelay)))
	}
	if fault != "" {
		p.injected[fault]++
	}
	return fault, delay, cut, nil
}

// owed reports whether kind, at rate, has not struck yet and applies: then
// it strikes the first request it can, so that every kind a spec asks for
// happens at least once whatever the spec's number of requests. Its kind
// is left in p.first.
func (p *Proxy) owed(kind Kind, rate float64, applies bool) bool {
	if rate > 0 && applies && p.injected[kind] == 0 {
		p.first = kind
		return true
	}
	return false
}

func watching(req *http.Request) bool { return req.URL.Query().Get("watch") == "true" }

// ServeHTTP injects the fault chosen for the request, or forwards it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	fault, delay, cut, then := p.choose(req)
	switch fault {
	case Refused500:
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out")))
		return
	case Refused503:
		writeStatus(w, apierrors.NewServiceUnavailable("the server is currently unable to handle the request"))
		return
	case Refused429:
		w.Header().Set("Retry-After", "1")
		writeStatus(w, apierrors.NewTooManyRequests("too many requests, please try again later", 1))
		return
	case LostReply500, LostReplyReset:
		p.forwardAndLose(w, req, fault, then)
		return
	case Delayed:
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return
		}
	}
	if cut > 0 {
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		timer := time.AfterFunc(cut, func() {
			p.mu.Lock()
			p.injected[WatchCut]++
			p.mu.Unlock()
			cancel()
		})
		defer timer.Stop()
		req = req.WithContext(ctx)
	}
	p.rp.ServeHTTP(w, req)
}

// forwardAndLose sends the request on, lets the API server do it, runs
// then (when set), and then loses its reply.
func (p *Proxy) forwardAndLose(w http.ResponseWriter, req *http.Request, fault Kind, then func()) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.upstream.Scheme, p.upstream.Host, p.upstream.Host, ""
	if resp, err := p.forward.RoundTrip(out); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	if then != nil {
		then()
	}
	if fault == LostReplyReset {
		panic(http.ErrAbortHandler) // resets the HTTP/2 stream
	}
	writeStatus(w, apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out")))
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = fmt.Fprint(w, mustJSON(&st))
}

func mustJSON(st *metav1.Status) string {
	b, err := json.Marshal(st)
	if err != nil {
		return `{"kind":"Status","apiVersion":"v1","status":"Failure"}`
	}
	return string(b)
}

// WriteKubeconfig writes a kubeconfig file for Config, for a process that
// is to talk to the API server through the proxy.
func (p *Proxy) WriteKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["faultproxy"] = &clientcmdapi.Cluster{Server: p.Config.Host, CertificateAuthorityData: p.Config.CAData}
	kc.AuthInfos["faultproxy"] = &clientcmdapi.AuthInfo{} // the proxy forwards with its upstream identity
	kc.Contexts["faultproxy"] = &clientcmdapi.Context{Cluster: "faultproxy", AuthInfo: "faultproxy"}
	kc.CurrentContext = "faultproxy"
	return clientcmd.WriteToFile(*kc, path)
}
