package pki

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"path/filepath"
	"time"
)

// clientValidity is how long a client certificate from ClientCert is
// valid; it lives only in the memory of the server that asked for it.
const clientValidity = 30 * 24 * time.Hour

// ClientCert issues, in memory, a client certificate (ExtKeyUsage
// ClientAuth only) for commonName, signed by the CA in dir (the CA Ensure
// created). The server presents it to the node agents' node API, which
// accept only a certificate of the cluster CA with that common name. It is
// never written to disk: a restarted server issues a fresh one.
func ClientCert(dir, commonName string, now time.Time) (tls.Certificate, error) {
	certPEM, ok, err := readOptional(filepath.Join(dir, CACertFile))
	if err != nil || !ok {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: CA certificate: %w", orMissing(err, CACertFile))
	}
	keyPEM, ok, err := readOptional(filepath.Join(dir, CAKeyFile))
	if err != nil || !ok {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: CA key: %w", orMissing(err, CAKeyFile))
	}
	ca, err := parseCert(certPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	caKey, err := parseKey(keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	key, err := newKey()
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	notAfter := now.Add(clientValidity)
	if ca.NotAfter.Before(notAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: client certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

func orMissing(err error, name string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s does not exist", name)
}
