package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Registry is an OCI registry in this process on https://127.0.0.1:<port>,
// which OLM v1 pulls catalog and bundle images from: no Docker engine is
// needed, the images are built here.
type Registry struct {
	// Host is host:port, the prefix of every image reference.
	Host string
	// CADir is the folder of the certificate authority that verifies it.
	CADir string
	srv   *httptest.Server
	cert  *servingCert
}

func startRegistry(dir string) (*Registry, error) {
	cert, err := newServingCert(dir, "registry")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.TLS = cert.TLS
	srv.StartTLS()
	return &Registry{Host: srv.Listener.Addr().String(), CADir: cert.CADir, srv: srv, cert: cert}, nil
}

// Push builds a one-layer image of files with labels, pushes it as
// repo:tag and returns its reference by digest (host/repo@sha256:...).
func (r *Registry) Push(ctx context.Context, repo, tag string, files map[string][]byte, labels map[string]string) (string, error) {
	img, err := crane.Image(files)
	if err != nil {
		return "", fmt.Errorf("building image %s: %w", repo, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("reading the config of image %s: %w", repo, err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return "", fmt.Errorf("labelling image %s: %w", repo, err)
	}
	ref := r.Host + "/" + repo + ":" + tag
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: r.cert.Pool, MinVersion: tls.VersionTLS12}
	if err := crane.Push(img, ref, crane.WithContext(ctx), crane.WithTransport(transport)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("digest of %s: %w", ref, err)
	}
	return r.Host + "/" + repo + "@" + digest.String(), nil
}

// Close stops the registry.
func (r *Registry) Close() { r.srv.Close() }
