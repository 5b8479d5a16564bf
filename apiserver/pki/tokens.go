package pki

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
)

// tokenBytes is the entropy of a generated token.
const tokenBytes = 32

// newToken returns 32 random bytes, hex encoded.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// ensureToken reads the token at path, or creates it. An existing token is
// kept as written (an operator may have set it), trimmed of surrounding
// whitespace; one that is empty or holds characters that cannot travel in
// an Authorization header is an error rather than silently replaced.
func ensureToken(log *slog.Logger, path string) (string, error) {
	b, ok, err := readOptional(path)
	if err != nil {
		return "", err
	}
	if ok {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("%w: %s is empty", ErrCorrupt, path)
		}
		for _, c := range tok {
			if c <= ' ' || c > '~' {
				return "", fmt.Errorf("%w: %s holds a character not allowed in a bearer token", ErrCorrupt, path)
			}
		}
		if err := tighten(log, path, secretMode); err != nil {
			return "", err
		}
		return tok, nil
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, []byte(tok+"\n"), secretMode); err != nil {
		return "", err
	}
	log.Info("created token", "path", path)
	return tok, nil
}
