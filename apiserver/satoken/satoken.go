// Package satoken signs and verifies ServiceAccount tokens: JWTs in the
// shape kube-apiserver issues (pkg/serviceaccount/claims.go, jwt.go),
// signed ES256 with the server's signing key, and publishes the public
// key the way kube-apiserver's service account issuer discovery does
// (/.well-known/openid-configuration and /openid/v1/jwks).
//
// The claims: iss (the issuer), sub (system:serviceaccount:<ns>:<name>),
// aud, exp, iat, nbf, jti, and the private claim "kubernetes.io" with
// namespace, serviceaccount {name, uid}, and, for a bound token, pod or
// secret {name, uid}, and node {name, uid} for a pod bound to a node.
// The header's kid is the key's id as upstream computes it: the
// unpadded base64url of the SHA-256 of the public key's PKIX DER.
//
// Verify checks the signature (ES256 only: no "none", no HMAC, no other
// key), iss, that aud holds one of the accepted audiences, and exp and
// nbf with upstream's leeway of 60 seconds; whether the ServiceAccount
// and the bound object still exist is the caller's to check.
package satoken

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultIssuer is the issuer (and the API server's own audience) that
// k3s and kubeadm configure by default.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Leeway is how far exp and nbf may be off (upstream's jwt.DefaultLeeway).
const Leeway = time.Minute

// SubjectPrefix starts a ServiceAccount's user name.
const SubjectPrefix = "system:serviceaccount:"

// Ref names one object in the private claim.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Kubernetes is the private claim "kubernetes.io".
type Kubernetes struct {
	Namespace      string           `json:"namespace,omitempty"`
	ServiceAccount Ref              `json:"serviceaccount"`
	Pod            *Ref             `json:"pod,omitempty"`
	Secret         *Ref             `json:"secret,omitempty"`
	Node           *Ref             `json:"node,omitempty"`
	WarnAfter      *jwt.NumericDate `json:"warnafter,omitempty"`
}

// Claims are a token's claims.
type Claims struct {
	jwt.RegisteredClaims
	Kubernetes Kubernetes `json:"kubernetes.io"`
}

// Request is what one token is issued for.
type Request struct {
	Namespace, Name, UID string // the ServiceAccount
	Audiences            []string
	Lifetime             time.Duration
	Pod, Secret, Node    *Ref
}

// Signer issues and verifies the tokens of one key and issuer.
type Signer struct {
	key    *ecdsa.PrivateKey
	issuer string
	kid    string
	now    func() time.Time
}

// New is a Signer over key; issuer "" is DefaultIssuer, now nil time.Now.
func New(key *ecdsa.PrivateKey, issuer string, now func() time.Time) (*Signer, error) {
	if key == nil {
		return nil, errors.New("satoken: no key")
	}
	if issuer == "" {
		issuer = DefaultIssuer
	}
	if now == nil {
		now = time.Now
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("satoken: %w", err)
	}
	sum := sha256.Sum256(der)
	return &Signer{key: key, issuer: issuer, kid: base64.RawURLEncoding.EncodeToString(sum[:]), now: now}, nil
}

// Issuer is the iss the Signer writes and accepts.
func (s *Signer) Issuer() string { return s.issuer }

// Issue signs a token for r; it returns the token and its exp.
func (s *Signer) Issue(r Request) (string, time.Time, error) {
	now := s.now().Truncate(time.Second)
	exp := now.Add(r.Lifetime)
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("satoken: %w", err)
	}
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.issuer,
			Subject:   SubjectPrefix + r.Namespace + ":" + r.Name,
			Audience:  jwt.ClaimStrings(r.Audiences),
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        hex.EncodeToString(jti[:]),
		},
		Kubernetes: Kubernetes{
			Namespace:      r.Namespace,
			ServiceAccount: Ref{Name: r.Name, UID: r.UID},
			Pod:            r.Pod, Secret: r.Secret, Node: r.Node,
		},
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	t.Header["kid"] = s.kid
	signed, err := t.SignedString(s.key)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("satoken: sign: %w", err)
	}
	return signed, exp, nil
}

// ErrNotServiceAccount: the token is no JWT of this issuer (another kind
// of token, or another issuer's JWT); other errors say why a token of
// this issuer is refused.
var ErrNotServiceAccount = errors.New("satoken: not a service account token of this issuer")

// LooksLikeJWT reports whether token has a JWT's three dot-separated parts.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

// Verify checks token's signature, issuer, audience (one of audiences),
// exp and nbf, and returns its claims.
func (s *Signer) Verify(token string, audiences []string) (*Claims, error) {
	if !LooksLikeJWT(token) {
		return nil, ErrNotServiceAccount
	}
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		return &s.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}), jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(s.now), jwt.WithExpirationRequired(), jwt.WithIssuer(s.issuer))
	if err != nil {
		if errors.Is(err, jwt.ErrTokenMalformed) || errors.Is(err, jwt.ErrTokenInvalidIssuer) {
			return nil, fmt.Errorf("%w: %v", ErrNotServiceAccount, err)
		}
		return nil, fmt.Errorf("satoken: %w", err)
	}
	if !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(audiences, a) }) {
		return nil, errors.New("satoken: token audiences are not accepted")
	}
	ns, name, ok := strings.Cut(strings.TrimPrefix(c.Subject, SubjectPrefix), ":")
	if !strings.HasPrefix(c.Subject, SubjectPrefix) || !ok || ns != c.Kubernetes.Namespace || name != c.Kubernetes.ServiceAccount.Name {
		return nil, errors.New("satoken: sub does not match the kubernetes.io claim")
	}
	return &c, nil
}

// Discovery is the OpenID provider configuration document
// (/.well-known/openid-configuration), pointing at jwksURI.
func (s *Signer) Discovery(jwksURI string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"issuer":                                s.issuer,
		"jwks_uri":                              jwksURI,
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
	})
}

// JWKS is the key set document (/openid/v1/jwks) with the public key.
func (s *Signer) JWKS() ([]byte, error) {
	pub := s.key.PublicKey
	b, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, fmt.Errorf("satoken: %w", err)
	}
	size := (len(b) - 1) / 2
	enc := base64.RawURLEncoding.EncodeToString
	return json.Marshal(map[string]any{"keys": []map[string]string{{
		"use": "sig", "kty": "EC", "kid": s.kid, "crv": "P-256", "alg": "ES256",
		"x": enc(b[1 : 1+size]), "y": enc(b[1+size:]),
	}}})
}
