package pki

import (
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"path/filepath"
)

// ServiceAccountKeyFile holds the key that signs ServiceAccount tokens
// (kube-apiserver's --service-account-signing-key-file): an ECDSA P-256
// key in PKCS #8 PEM, mode 0600. Deleting it while the server is stopped
// rotates it: every ServiceAccount token issued before is refused.
const ServiceAccountKeyFile = "tls/service-account.key"

// ServiceAccountKey reads the ServiceAccount signing key under dir,
// making it (and the tls directory) on the first call. A key of another
// type than ECDSA is refused: the tokens are signed ES256.
func ServiceAccountKey(dir string, log *slog.Logger) (*ecdsa.PrivateKey, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ensureDir(log, filepath.Join(dir, TLSDir)); err != nil {
		return nil, fmt.Errorf("pki: service account key: %w", err)
	}
	path := filepath.Join(dir, ServiceAccountKeyFile)
	data, ok, err := readOptional(path)
	if err != nil {
		return nil, fmt.Errorf("pki: service account key: %w", err)
	}
	if ok {
		if err := tighten(log, path, secretMode); err != nil {
			return nil, fmt.Errorf("pki: service account key: %w", err)
		}
		k, err := parseKey(data)
		if err != nil {
			return nil, fmt.Errorf("pki: service account key %s: %w (delete it to make a new one; every ServiceAccount token is then refused)", path, err)
		}
		ek, isEC := k.(*ecdsa.PrivateKey)
		if !isEC {
			return nil, fmt.Errorf("pki: service account key %s: a %T, not an ECDSA key", path, k)
		}
		return ek, nil
	}
	k, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("pki: service account key: %w", err)
	}
	pemKey, err := encodeKey(k)
	if err != nil {
		return nil, fmt.Errorf("pki: service account key: %w", err)
	}
	if err := writeFileAtomic(path, pemKey, secretMode); err != nil {
		return nil, fmt.Errorf("pki: service account key: %w", err)
	}
	log.Info("made the ServiceAccount signing key", "path", path)
	return k, nil
}
