package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/cert"
)

// servingCert is a self-signed certificate for 127.0.0.1 (and localhost),
// written into dir as tls.crt and tls.key (client-go's
// GenerateSelfSignedCertKey: the serving certificate and the authority that
// signed it); the same chain is written as ca.crt into CADir, for the
// clients to trust.
type servingCert struct {
	CertFile, KeyFile string
	// CADir holds ca.crt alone: a folder of certificate authorities, as
	// containers/image (DockerCertPath) and operator-controller's
	// --catalogd-cas-dir read it.
	CADir string
	TLS   *tls.Config
	Pool  *x509.CertPool
}

func newServingCert(dir, name string) (*servingCert, error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("generating the certificate of %s: %w", name, err)
	}
	sc := &servingCert{
		CertFile: filepath.Join(dir, name, "tls.crt"), KeyFile: filepath.Join(dir, name, "tls.key"),
		CADir: filepath.Join(dir, name, "ca"),
	}
	if err := os.MkdirAll(sc.CADir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the folders of %s: %w", name, err)
	}
	for path, data := range map[string][]byte{sc.CertFile: certPEM, sc.KeyFile: keyPEM, filepath.Join(sc.CADir, "ca.crt"): certPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("loading the key pair of %s: %w", name, err)
	}
	sc.Pool = x509.NewCertPool()
	sc.Pool.AppendCertsFromPEM(certPEM)
	sc.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return sc, nil
}
