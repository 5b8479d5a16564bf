package pki

import "crypto/tls"

// CipherSuites are the TLS 1.2 suites Skiff's servers offer: ECDHE with an
// AEAD (AES-GCM or ChaCha20-Poly1305) only, kube-apiserver's secure
// defaults; no CBC, no SHA-1 MAC, no static RSA key exchange. TLS 1.3's
// suites are all AEAD and not configurable.
func CipherSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}
