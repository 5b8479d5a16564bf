package pki

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Paths under the data dir.
const (
	TLSDir         = "tls"
	CACertFile     = "tls/ca.crt"
	CAKeyFile      = "tls/ca.key"
	ServerCertFile = "tls/server.crt"
	ServerKeyFile  = "tls/server.key"
	TokensDir      = "tokens"
	AdminTokenFile = "tokens/admin"
	NodeTokenFile  = "tokens/node"
	// DashboardTokenFile holds the read-only token for the dashboard.
	DashboardTokenFile = "tokens/dashboard"
	KubeconfigFile     = "admin.kubeconfig"
)

// DefaultServer is the API server URL written to the kubeconfig when
// Options.Server is empty.
const DefaultServer = "https://127.0.0.1:6443"

// defaultSANs are always in the serving certificate, so that the local
// kubeconfig works whatever the node's addresses.
var defaultSANs = []string{"localhost", "127.0.0.1", "::1"}

// Options configures Ensure.
type Options struct {
	// SANs are the names the serving certificate must carry besides
	// localhost, 127.0.0.1, ::1 and the host of Server: the node's
	// addresses and each --tls-san. DNS names and IP addresses may be
	// mixed; Ensure sorts them apart.
	SANs []string
	// Server is the API server URL written into admin.kubeconfig
	// (DefaultServer when empty).
	Server string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives one line per file created or re-issued; discarded
	// when nil.
	Logger *slog.Logger
}

// Bundle is what the API server needs from the data dir.
type Bundle struct {
	// CACertPEM is the CA certificate clients trust.
	CACertPEM []byte
	// ServerTLS serves the API: the serving certificate, TLS 1.2 or later.
	// Each caller should Clone it before changing it.
	ServerTLS *tls.Config
	// AdminToken is the bearer token with full access.
	AdminToken string
	// NodeToken is the token agents join with.
	NodeToken string
	// DashboardToken is the read-only token for the dashboard.
	DashboardToken string
	// KubeconfigPath is the admin kubeconfig, <dir>/admin.kubeconfig.
	KubeconfigPath string
	// SANs lists the names the serving certificate carries.
	SANs []string
	// ServerCertNotAfter is when the serving certificate expires; a restart
	// within 30 days of it re-issues the certificate.
	ServerCertNotAfter time.Time
}

// Ensure bootstraps, or loads, the CA, the serving certificate, the tokens
// and the admin kubeconfig in dir, and returns them. The first call creates
// every file; later calls reuse them, re-issuing only the serving
// certificate when it lacks a requested SAN, is within 30 days of expiry,
// or no longer matches its key or the CA.
func Ensure(ctx context.Context, dir string, opts Options) (*Bundle, error) {
	b, err := ensure(ctx, dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	return b, nil
}

func ensure(ctx context.Context, dir string, opts Options) (*Bundle, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	server := opts.Server
	if server == "" {
		server = DefaultServer
	}
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("server URL %q: want https://host[:port]", server)
	}
	sans, err := parseSANs(append(append(append([]string{}, defaultSANs...), u.Hostname()), opts.SANs...))
	if err != nil {
		return nil, err
	}

	// The data dir is created 0700 but an existing one keeps its mode: it
	// may be shared (db/, cni/) or chosen by the operator. The directories
	// holding secrets are Ensure's own and always 0700.
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	for _, d := range []string{filepath.Join(dir, TLSDir), filepath.Join(dir, TokensDir)} {
		if err := ensureDir(log, d); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, TLSDir), filepath.Join(dir, TokensDir)} {
		if err := removeStaleTemps(log, d); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	caCert, caPEM, caKey, err := ensureCA(log, dir, now())
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	servingPEM, servingKeyPEM, servingCert, err := ensureServing(log, dir, caCert, caKey, sans, now())
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	tokens := map[string]string{}
	for _, name := range []string{AdminTokenFile, NodeTokenFile, DashboardTokenFile} {
		tok, err := ensureToken(log, filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		tokens[name] = tok
	}

	kubeconfig := filepath.Join(dir, KubeconfigFile)
	if err := ensureKubeconfig(log, kubeconfig, server, caPEM, tokens[AdminTokenFile]); err != nil {
		return nil, err
	}

	pair, err := tls.X509KeyPair(servingPEM, servingKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load serving key pair: %w", err)
	}
	return &Bundle{
		CACertPEM: caPEM,
		ServerTLS: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			CipherSuites: CipherSuites(),
			Certificates: []tls.Certificate{pair},
		},
		AdminToken:         tokens[AdminTokenFile],
		NodeToken:          tokens[NodeTokenFile],
		DashboardToken:     tokens[DashboardTokenFile],
		KubeconfigPath:     kubeconfig,
		SANs:               sans.strings(),
		ServerCertNotAfter: servingCert.NotAfter,
	}, nil
}

// ensureCA loads the CA, or creates it. The key is written before the
// certificate: a key without a certificate (a crash between the two) gets a
// new certificate, since no one can trust one that was never written; a
// certificate without its key is an error.
func ensureCA(log *slog.Logger, dir string, now time.Time) (*x509.Certificate, []byte, crypto.Signer, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPEM, haveCert, err := readOptional(certPath)
	if err != nil {
		return nil, nil, nil, err
	}
	keyPEM, haveKey, err := readOptional(keyPath)
	if err != nil {
		return nil, nil, nil, err
	}
	if haveCert && !haveKey {
		return nil, nil, nil, fmt.Errorf("%w: %s exists without %s", ErrCAKeyMissing, certPath, keyPath)
	}

	var key crypto.Signer
	if haveKey {
		if key, err = parseKey(keyPEM); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, keyPath, err)
		}
		if err := tighten(log, keyPath, secretMode); err != nil {
			return nil, nil, nil, err
		}
	} else {
		k, err := newKey()
		if err != nil {
			return nil, nil, nil, err
		}
		if keyPEM, err = encodeKey(k); err != nil {
			return nil, nil, nil, err
		}
		if err := writeFileAtomic(keyPath, keyPEM, secretMode); err != nil {
			return nil, nil, nil, err
		}
		key = k
		log.Info("created CA key", "path", keyPath)
	}

	if haveCert {
		cert, err := parseCert(certPEM)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, certPath, err)
		}
		if !cert.IsCA {
			return nil, nil, nil, fmt.Errorf("%w: %s is not a CA certificate", ErrCorrupt, certPath)
		}
		if !keyMatches(cert, key) {
			return nil, nil, nil, fmt.Errorf("%w: %s does not match %s", ErrCorrupt, keyPath, certPath)
		}
		if !now.Before(cert.NotAfter) {
			return nil, nil, nil, fmt.Errorf("%w: %s expired at %s", ErrCAExpired, certPath, cert.NotAfter.Format(time.RFC3339))
		}
		if cert.NotAfter.Sub(now) < servingRenewBefore {
			log.Warn("CA certificate expires soon; move tls/ away and restart to create a new CA", "path", certPath, "notAfter", cert.NotAfter)
		}
		return cert, certPEM, key, nil
	}

	der, err := newCACert(key, now)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM = encodeCert(der)
	if err := writeFileAtomic(certPath, certPEM, publicMode); err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse new CA certificate: %w", err)
	}
	log.Info("created CA certificate", "path", certPath, "notAfter", cert.NotAfter)
	return cert, certPEM, key, nil
}

// ensureServing loads the serving certificate and key, re-issuing the
// certificate (from the same CA, with the same key when it is usable) when
// it fails checkServing. The key is written before the certificate, so a
// crash between the two leaves a mismatch that the next start repairs.
func ensureServing(log *slog.Logger, dir string, ca *x509.Certificate, caKey crypto.Signer, sans sanSet, now time.Time) (certPEM, keyPEM []byte, cert *x509.Certificate, err error) {
	certPath, keyPath := filepath.Join(dir, ServerCertFile), filepath.Join(dir, ServerKeyFile)
	keyPEM, haveKey, err := readOptional(keyPath)
	if err != nil {
		return nil, nil, nil, err
	}
	var key crypto.Signer
	if haveKey {
		if key, err = parseKey(keyPEM); err != nil {
			log.Warn("serving key unreadable, replacing it", "path", keyPath, "err", err)
			key = nil
		} else if err := tighten(log, keyPath, secretMode); err != nil {
			return nil, nil, nil, err
		}
	}
	if key == nil {
		k, err := newKey()
		if err != nil {
			return nil, nil, nil, err
		}
		if keyPEM, err = encodeKey(k); err != nil {
			return nil, nil, nil, err
		}
		if err := writeFileAtomic(keyPath, keyPEM, secretMode); err != nil {
			return nil, nil, nil, err
		}
		key = k
		log.Info("created serving key", "path", keyPath)
	}

	certPEM, haveCert, err := readOptional(certPath)
	if err != nil {
		return nil, nil, nil, err
	}
	reason := "missing"
	if haveCert {
		cert, reason = checkServing(certPEM, key, ca, sans, now)
		if reason == "" {
			return certPEM, keyPEM, cert, nil
		}
	}

	der, err := newServingCert(ca, caKey, key.Public(), sans, now)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM = encodeCert(der)
	if err := writeFileAtomic(certPath, certPEM, publicMode); err != nil {
		return nil, nil, nil, err
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		return nil, nil, nil, fmt.Errorf("parse new serving certificate: %w", err)
	}
	log.Info("issued serving certificate", "path", certPath, "reason", reason, "sans", strings.Join(sans.strings(), ","), "notAfter", cert.NotAfter)
	return certPEM, keyPEM, cert, nil
}

// checkServing returns the parsed certificate and "" when it can keep
// serving, or a reason to re-issue it.
func checkServing(certPEM []byte, key crypto.Signer, ca *x509.Certificate, sans sanSet, now time.Time) (*x509.Certificate, string) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, "unreadable: " + err.Error()
	}
	if !keyMatches(cert, key) {
		return nil, "does not match the serving key"
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{
		Roots:       roots,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}); err != nil {
		return nil, "does not verify against the CA: " + err.Error()
	}
	if left := cert.NotAfter.Sub(now); left < servingRenewBefore {
		return nil, fmt.Sprintf("expires in %s", left.Round(time.Hour))
	}
	if missing := covers(cert, sans); len(missing) > 0 {
		return nil, "lacks SANs " + strings.Join(missing, ",")
	}
	return cert, ""
}

// ensureKubeconfig writes the admin kubeconfig unless it already holds
// exactly what would be written.
func ensureKubeconfig(log *slog.Logger, path, server string, caPEM []byte, token string) error {
	want, err := renderKubeconfig(server, caPEM, "admin", token)
	if err != nil {
		return err
	}
	have, ok, err := readOptional(path)
	if err != nil {
		return err
	}
	if ok && bytes.Equal(have, want) {
		return tighten(log, path, secretMode)
	}
	if err := writeFileAtomic(path, want, secretMode); err != nil {
		return err
	}
	log.Info("wrote admin kubeconfig", "path", path, "server", server)
	return nil
}
