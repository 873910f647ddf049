package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// servingCert is a self-signed certificate for 127.0.0.1 (and localhost),
// written into dir as tls.crt and tls.key; its own certificate is the CA
// that clients trust, written as ca.crt into CADir.
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
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the key of %s: %w", name, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("signing the certificate of %s: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the key of %s: %w", name, err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
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
