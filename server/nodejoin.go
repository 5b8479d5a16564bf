package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent"
)

// nodeTokensDir holds one file per joined node, under the data dir.
const nodeTokensDir = "tokens/nodes"

// nodeTokenPrefix starts every node token: "node:<name>:<secret>". The
// name makes the lookup a map access; the secret is compared in constant
// time against the stored hash.
const nodeTokenPrefix = "node:"

// nodeTokens keeps the per-node credentials: for each node that joined, a
// file tokens/nodes/<name> (0600) holding the SHA-256 of its node token
// and of its node password, never the secrets themselves.
//
// # Invariants
//
//   - A node name is bound to the first password it joined with; a join
//     with another password is refused (a holder of the join token cannot
//     take over an existing node). Deleting the file frees the name.
//   - Every successful join issues a fresh token and replaces the stored
//     hash, so only the latest token of a node authenticates.
//   - The file is written (temp file, fsync, rename) before the token is
//     returned or accepted.
type nodeTokens struct {
	dir string
	log *slog.Logger

	// mu protects byName.
	mu     sync.RWMutex
	byName map[string]nodeRecord
}

type nodeRecord struct {
	TokenHash    string `json:"tokenHash"`
	PasswordHash string `json:"passwordHash"`
	// Address is the IP the node's latest join came from: the only
	// host the server dials for the node's API (nodeapi.go). A record
	// without one (written before addresses were kept) authenticates
	// nothing, so that the agent, answered 401, joins again by itself.
	Address string `json:"address,omitempty"`
}

// loadNodeTokens reads every record under <dataDir>/tokens/nodes.
func loadNodeTokens(dataDir string, log *slog.Logger) (*nodeTokens, error) {
	t := &nodeTokens{dir: filepath.Join(dataDir, nodeTokensDir), log: log, byName: map[string]nodeRecord{}}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return nil, fmt.Errorf("server: node tokens: %w", err)
	}
	ents, err := os.ReadDir(t.dir)
	if err != nil {
		return nil, fmt.Errorf("server: node tokens: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(t.dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("server: node tokens: %w", err)
		}
		var r nodeRecord
		if err := json.Unmarshal(b, &r); err != nil || r.TokenHash == "" || r.PasswordHash == "" {
			log.Warn("ignoring a malformed node token file", "file", e.Name(), "err", err)
			continue
		}
		if r.Address == "" {
			log.Info("node joined before join addresses were kept: its token is refused until its agent joins again (it does so by itself)", "node", e.Name())
		}
		t.byName[e.Name()] = r
	}
	return t, nil
}

func hashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// authenticate returns the node a token belongs to.
func (t *nodeTokens) authenticate(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, nodeTokenPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", false
	}
	name := rest[:i]
	t.mu.RLock()
	r, ok := t.byName[name]
	t.mu.RUnlock()
	if !ok || r.Address == "" {
		return "", false
	}
	got := hashSecret(rest[i+1:])
	if subtle.ConstantTimeCompare([]byte(got), []byte(r.TokenHash)) != 1 {
		return "", false
	}
	return name, true
}

// joinAddress is the address the node's latest join came from.
func (t *nodeTokens) joinAddress(name string) (netip.Addr, bool) {
	t.mu.RLock()
	r, ok := t.byName[name]
	t.mu.RUnlock()
	if !ok {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(r.Address)
	return a, err == nil
}

// errPasswordMismatch: the name belongs to a machine with another password.
var errPasswordMismatch = errors.New("node password mismatch")

// issue checks the node's password (recording it on the first join) and
// returns a fresh token for the node, recording addr as the node's
// address.
func (t *nodeTokens) issue(name, password string, addr netip.Addr) (string, error) {
	if !addr.IsValid() {
		return "", errors.New("the join request has no client address")
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	secret := hex.EncodeToString(buf)
	pw := hashSecret(password)
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.byName[name]; ok && subtle.ConstantTimeCompare([]byte(r.PasswordHash), []byte(pw)) != 1 {
		return "", errPasswordMismatch
	}
	r := nodeRecord{TokenHash: hashSecret(secret), PasswordHash: pw, Address: addr.Unmap().String()}
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(filepath.Join(t.dir, name), b); err != nil {
		return "", fmt.Errorf("server: node token for %q: %w", name, err)
	}
	t.byName[name] = r
	return nodeTokenPrefix + name + ":" + secret, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// joinHandler serves POST /skiff/v1/nodes/{name}/token, outside the
// resource API (it has its own authentication: the join token).
type joinHandler struct {
	joinToken string
	tokens    *nodeTokens
	log       *slog.Logger
}

const maxJoinBody = 64 << 10

func (h *joinHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, reason api.StatusReason, msg string) {
		writeStatus(w, code, reason, msg)
	}
	rest, _ := strings.CutPrefix(r.URL.EscapedPath(), "/skiff/v1/nodes/")
	esc, ok := strings.CutSuffix(rest, "/token")
	name, err := url.PathUnescape(esc)
	if !ok || err != nil || name == "" || strings.Contains(name, "/") {
		fail(http.StatusNotFound, api.StatusReasonNotFound, "the server could not find the requested resource")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
		return
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || h.joinToken == "" ||
		subtle.ConstantTimeCompare([]byte(tok), []byte(h.joinToken)) != 1 {
		fail(http.StatusUnauthorized, api.StatusReasonUnauthorized, "Unauthorized: a node joins with the join token")
		return
	}
	if errs := api.NameIsDNSSubdomain(name, false); len(errs) > 0 {
		fail(http.StatusUnprocessableEntity, api.StatusReasonInvalid,
			fmt.Sprintf("node name %q is invalid: %s", name, strings.Join(errs, "; ")))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJoinBody+1))
	if err != nil || len(body) > maxJoinBody {
		fail(http.StatusBadRequest, api.StatusReasonBadRequest, "unreadable or oversized body")
		return
	}
	var req netagent.JoinRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(http.StatusBadRequest, api.StatusReasonBadRequest, "decode NodeJoinRequest: "+err.Error())
		return
	}
	if len(req.Password) < netagent.MinPasswordLen {
		fail(http.StatusUnprocessableEntity, api.StatusReasonInvalid,
			fmt.Sprintf("password: must be at least %d characters", netagent.MinPasswordLen))
		return
	}
	// The address the server will dial for the node's API: the one it
	// sees the node at, not one the node states.
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	token, err := h.tokens.issue(name, req.Password, remote.Addr())
	switch {
	case errors.Is(err, errPasswordMismatch):
		h.log.Warn("node join refused: password mismatch", "node", name, "remote", r.RemoteAddr)
		fail(http.StatusForbidden, api.StatusReasonForbidden, fmt.Sprintf(
			"node %q already joined from a machine with another node password; remove %s/%s on the server to let another machine take the name",
			name, nodeTokensDir, name))
		return
	case err != nil:
		h.log.Error("node join failed", "node", name, "err", err)
		fail(http.StatusInternalServerError, api.StatusReasonInternalError, "issuing the node token failed")
		return
	}
	h.log.Info("node joined", "node", name, "remote", r.RemoteAddr, "address", remote.Addr().Unmap())
	resp := netagent.JoinResponse{
		Kind: netagent.JoinResponseKind, APIVersion: netagent.JoinAPIVersion,
		NodeName: name, User: nodeUserPrefix + name, Token: token,
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(resp)
}

func writeStatus(w http.ResponseWriter, code int, reason api.StatusReason, msg string) {
	st := api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
		Message: msg, Reason: reason, Code: int32(code)}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// withJoin routes the join endpoint to h and everything else to api.
func withJoin(h *joinHandler, apiHandler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/skiff/v1/nodes/") {
			h.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
}
