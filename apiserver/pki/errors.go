package pki

import "errors"

// Sentinel errors. Ensure wraps them with the file concerned; each means the
// data dir needs an operator's attention, since replacing the file would
// invalidate every kubeconfig and joined node.
var (
	// ErrCAKeyMissing: tls/ca.crt exists but tls/ca.key does not. Skiff
	// will not make a new CA over an existing one.
	ErrCAKeyMissing = errors.New("CA certificate present but CA key missing")

	// ErrCorrupt: a CA file or token file exists but cannot be used (not
	// PEM, not a CA, key and certificate do not match, empty token).
	ErrCorrupt = errors.New("corrupt file")

	// ErrCAExpired: the CA certificate has expired; no certificate it
	// signs can be trusted. Move tls/ away to bootstrap a new CA, then hand
	// out the new kubeconfig and tokens.
	ErrCAExpired = errors.New("CA certificate expired")

	// ErrInvalidSAN: a subject alternative name is neither an IP address
	// nor a DNS name.
	ErrInvalidSAN = errors.New("invalid subject alternative name")

	// ErrInvalidKubeconfig: a kubeconfig cannot be parsed or names a
	// context, cluster or user it does not define.
	ErrInvalidKubeconfig = errors.New("invalid kubeconfig")
)
