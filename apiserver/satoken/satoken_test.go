package satoken

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func newSigner(t *testing.T, now time.Time) (*Signer, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(k, "", func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	return s, k
}

var req = Request{Namespace: "ns", Name: "sa", UID: "u1", Audiences: []string{DefaultIssuer}, Lifetime: time.Hour}

func TestIssueVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, _ := newSigner(t, now)
	r := req
	r.Pod = &Ref{Name: "p", UID: "pu"}
	tok, exp, err := s.Issue(r)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("exp %v", exp)
	}
	c, err := s.Verify(tok, []string{"other", DefaultIssuer})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "system:serviceaccount:ns:sa" || c.Kubernetes.ServiceAccount.UID != "u1" || c.Kubernetes.Pod.UID != "pu" || c.ID == "" {
		t.Fatalf("claims %+v", c)
	}
	if _, err := s.Verify(tok, []string{"vault"}); err == nil {
		t.Fatal("another audience accepted")
	}
	// Within the leeway on both sides, refused past it.
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{
		{now.Add(time.Hour + 30*time.Second), true},
		{now.Add(time.Hour + 2*time.Minute), false},
		{now.Add(-30 * time.Second), true},
		{now.Add(-2 * time.Minute), false},
	} {
		at := tc.at
		s.now = func() time.Time { return at }
		if _, err := s.Verify(tok, []string{DefaultIssuer}); (err == nil) != tc.ok {
			t.Errorf("at %v: err %v, want ok=%v", at.Sub(now), err, tc.ok)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := time.Now()
	s, key := newSigner(t, now)
	other, _ := newSigner(t, now)
	good := jwt.MapClaims{"iss": DefaultIssuer, "sub": "system:serviceaccount:ns:sa", "aud": []string{DefaultIssuer},
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "nbf": now.Unix(),
		"kubernetes.io": map[string]any{"namespace": "ns", "serviceaccount": map[string]any{"name": "sa", "uid": "u"}}}
	sign := func(m jwt.SigningMethod, k any, edit func(jwt.MapClaims)) string {
		c := jwt.MapClaims{}
		for k, v := range good {
			c[k] = v
		}
		if edit != nil {
			edit(c)
		}
		tok, err := jwt.NewWithClaims(m, c).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if _, err := s.Verify(sign(jwt.SigningMethodES256, key, nil), []string{DefaultIssuer}); err != nil {
		t.Fatalf("the good token: %v", err)
	}
	otherTok, _, err := other.Issue(req)
	if err != nil {
		t.Fatal(err)
	}
	pubBytes, _ := key.PublicKey.Bytes()
	// alg "none": header {"alg":"none"}, no signature.
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	body, _ := json.Marshal(good)
	none := hdr + "." + base64.RawURLEncoding.EncodeToString(body) + "."
	// A forged signature: r and s of the right size, not a signature.
	forged := strings.Join(strings.Split(sign(jwt.SigningMethodES256, key, nil), ".")[:2], ".") + "." +
		base64.RawURLEncoding.EncodeToString(append(big.NewInt(1).FillBytes(make([]byte, 32)), big.NewInt(1).FillBytes(make([]byte, 32))...))
	for name, tok := range map[string]string{
		"another key":            otherTok,
		"alg none":               none,
		"HS256 with the pub key": sign(jwt.SigningMethodHS256, pubBytes, nil),
		"forged signature":       forged,
		"another issuer":         sign(jwt.SigningMethodES256, key, func(c jwt.MapClaims) { c["iss"] = "https://evil" }),
		"no exp":                 sign(jwt.SigningMethodES256, key, func(c jwt.MapClaims) { delete(c, "exp") }),
		"sub of another SA":      sign(jwt.SigningMethodES256, key, func(c jwt.MapClaims) { c["sub"] = "system:serviceaccount:ns:admin" }),
		"sub not an SA":          sign(jwt.SigningMethodES256, key, func(c jwt.MapClaims) { c["sub"] = "admin" }),
		"no audience":            sign(jwt.SigningMethodES256, key, func(c jwt.MapClaims) { delete(c, "aud") }),
		"not a JWT":              "node:a:b",
	} {
		if _, err := s.Verify(tok, []string{DefaultIssuer}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := s.Verify("node:a:b", nil); !errors.Is(err, ErrNotServiceAccount) {
		t.Errorf("another kind of token: %v, want ErrNotServiceAccount", err)
	}
}

func TestJWKSMatchesKey(t *testing.T) {
	s, key := newSigner(t, time.Now())
	b, err := s.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct{ Kid, Kty, Crv, Alg, Use, X, Y string } `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	k := set.Keys[0]
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	if k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" || k.Use != "sig" || k.Kid != s.kid ||
		new(big.Int).SetBytes(x).Cmp(key.X) != 0 || new(big.Int).SetBytes(y).Cmp(key.Y) != 0 {
		t.Fatalf("jwks %+v", k)
	}
	d, err := s.Discovery(DefaultIssuer + "/openid/v1/jwks")
	if err != nil || !strings.Contains(string(d), `"issuer":"`+DefaultIssuer+`"`) {
		t.Fatalf("discovery %s %v", d, err)
	}
}
