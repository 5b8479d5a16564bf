package netagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/skiff-dev/skiff/client"
)

// The join protocol (server side: server/nodejoin.go).
//
// An agent holds the cluster's join token (tokens/node on the server) and
// a node password of its own (a random secret created on its first start,
// kept in <data-dir>/agent/node-password). It POSTs the password to
// JoinPath(node) with the join token as bearer token and gets a node token
// that authenticates as system:node:<node>.
//
// The server remembers the hash of the first password a node name joined
// with and refuses another (403): a second machine cannot take over a
// node's name with the join token alone. Each successful join re-issues
// the node token (the old one stops working), so the server stores only
// hashes and a leaked node token is revoked by the node's next restart.
// The agent caches its node token (<data-dir>/agent/node-token) and uses it
// until the server rejects it (401), so an agent restarting while the
// server is down keeps running its pods.
const joinPathPrefix = "/skiff/v1/nodes/"

// JoinPath is the path of the join endpoint for a node.
func JoinPath(node string) string {
	return joinPathPrefix + url.PathEscape(node) + "/token"
}

// JoinRequest is the body of a join.
type JoinRequest struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Password is the node's password (at least MinPasswordLen bytes).
	Password string `json:"password"`
}

// JoinResponse answers a successful join.
type JoinResponse struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	NodeName   string `json:"nodeName"`
	// User is the user the token authenticates as (system:node:<name>).
	User string `json:"user"`
	// Token is the node's bearer token.
	Token string `json:"token"`
}

// Kinds and version of the join documents.
const (
	JoinAPIVersion      = "skiff/v1"
	JoinRequestKind     = "NodeJoinRequest"
	JoinResponseKind    = "NodeToken"
	MinPasswordLen      = 16
	nodePasswordFile    = "node-password"
	nodeTokenFile       = "node-token"
	agentStateDirectory = "agent"
)

// Join exchanges joinToken for a node token.
func Join(ctx context.Context, server string, caPEM []byte, joinToken, node, password string) (JoinResponse, error) {
	c, err := client.New(client.Config{Server: server, CAPEM: caPEM, Token: joinToken, UserAgent: "skiff-agent/" + node})
	if err != nil {
		return JoinResponse{}, fmt.Errorf("netagent: join: %w", err)
	}
	var resp JoinResponse
	req := JoinRequest{Kind: JoinRequestKind, APIVersion: JoinAPIVersion, Password: password}
	if err := c.Do(ctx, http.MethodPost, JoinPath(node), req, &resp); err != nil {
		return JoinResponse{}, fmt.Errorf("netagent: join as node %q: %w", node, err)
	}
	if resp.Token == "" {
		return JoinResponse{}, fmt.Errorf("netagent: join as node %q: the server returned no token", node)
	}
	return resp, nil
}

// credentials keeps the node password and the cached node token in
// <data-dir>/agent, files 0600.
type credentials struct {
	dir string
}

func (c credentials) password() (string, error) {
	p := filepath.Join(c.dir, nodePasswordFile)
	b, err := os.ReadFile(p)
	if err == nil {
		if s := strings.TrimSpace(string(b)); len(s) >= MinPasswordLen {
			return s, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("netagent: node password: %w", err)
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("netagent: node password: %w", err)
	}
	s := hex.EncodeToString(buf)
	if err := writeSecret(p, s); err != nil {
		return "", fmt.Errorf("netagent: node password: %w", err)
	}
	return s, nil
}

func (c credentials) cachedToken() string {
	b, err := os.ReadFile(filepath.Join(c.dir, nodeTokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (c credentials) saveToken(tok string) error {
	return writeSecret(filepath.Join(c.dir, nodeTokenFile), tok)
}

func (c credentials) dropToken() { _ = os.Remove(filepath.Join(c.dir, nodeTokenFile)) }

// writeSecret writes a 0600 file atomically (temp file + rename).
func writeSecret(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content + "\n"); err != nil {
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
