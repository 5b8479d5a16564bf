package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Certificate lifetimes.
const (
	caValidityYears    = 10
	servingValidity    = 365 * 24 * time.Hour
	servingRenewBefore = 30 * 24 * time.Hour
	// backdate covers clocks a little behind the server's.
	backdate = time.Hour
)

// sanSet is a normalised set of subject alternative names.
type sanSet struct {
	dns []string     // lower case, sorted, unique
	ips []netip.Addr // unmapped, sorted, unique
}

// strings lists the names, DNS names first.
func (s sanSet) strings() []string {
	out := slices.Clone(s.dns)
	for _, ip := range s.ips {
		out = append(out, ip.String())
	}
	return out
}

func (s sanSet) netIPs() []net.IP {
	out := make([]net.IP, len(s.ips))
	for i, ip := range s.ips {
		out[i] = net.IP(ip.AsSlice())
	}
	return out
}

// parseSANs splits names into DNS names and IP addresses. Empty entries are
// skipped; an IP may be written in brackets ([::1]).
func parseSANs(names []string) (sanSet, error) {
	var s sanSet
	for _, raw := range names {
		n := strings.TrimSpace(raw)
		if n == "" {
			continue
		}
		if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(n, "["), "]")); err == nil {
			if ip.Zone() != "" {
				return sanSet{}, fmt.Errorf("%w: %q: an IP with a zone", ErrInvalidSAN, raw)
			}
			s.ips = append(s.ips, ip.Unmap())
			continue
		}
		d := strings.TrimSuffix(strings.ToLower(n), ".")
		if !validDNSName(d) {
			return sanSet{}, fmt.Errorf("%w: %q is neither an IP address nor a DNS name", ErrInvalidSAN, raw)
		}
		s.dns = append(s.dns, d)
	}
	slices.Sort(s.dns)
	s.dns = slices.Compact(s.dns)
	slices.SortFunc(s.ips, func(a, b netip.Addr) int { return a.Compare(b) })
	s.ips = slices.Compact(s.ips)
	return s, nil
}

// validDNSName accepts names of letters, digits, hyphens and dots, with an
// optional leading "*." wildcard label.
func validDNSName(d string) bool {
	d = strings.TrimPrefix(d, "*.")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// covers reports whether cert names every SAN in want, and lists those it
// lacks.
func covers(cert *x509.Certificate, want sanSet) []string {
	var missing []string
	for _, d := range want.dns {
		if !slices.ContainsFunc(cert.DNSNames, func(n string) bool { return strings.EqualFold(n, d) }) {
			missing = append(missing, d)
		}
	}
	for _, ip := range want.ips {
		if !slices.ContainsFunc(cert.IPAddresses, func(n net.IP) bool {
			a, ok := netip.AddrFromSlice(n)
			return ok && a.Unmap() == ip
		}) {
			missing = append(missing, ip.String())
		}
	}
	return missing
}

// newKey makes an ECDSA P-256 key.
func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return k, nil
}

// encodeKey encodes a private key as PKCS #8 PEM.
func encodeKey(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// parseKey decodes a PEM private key: PKCS #8, or SEC 1 ("EC PRIVATE KEY").
func parseKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported key type %T", k)
		}
		return s, nil
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
}

// encodeCert encodes a DER certificate as PEM.
func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// parseCert decodes the first PEM certificate in data.
func parseCert(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM certificate")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// keyMatches reports whether key is the private half of cert's public key.
func keyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}

// serialNumber returns a random positive 128-bit serial number.
func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// newCACert self-signs a CA certificate valid for ten years from now.
func newCACert(key crypto.Signer, now time.Time) ([]byte, error) {
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("skiff-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.AddDate(caValidityYears, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	return der, nil
}

// newServingCert issues a serving certificate for sans, signed by the CA,
// valid for a year or until the CA expires, whichever is sooner.
func newServingCert(ca *x509.Certificate, caKey crypto.Signer, pub crypto.PublicKey, sans sanSet, now time.Time) ([]byte, error) {
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(servingValidity)
	if ca.NotAfter.Before(notAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "skiff-apiserver"},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              sans.dns,
		IPAddresses:           sans.netIPs(),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	return der, nil
}
