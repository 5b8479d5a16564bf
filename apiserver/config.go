package apiserver

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/store"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 3 << 20

// Config is everything New needs.
type Config struct {
	// Store holds the objects. Required.
	Store store.Interface
	// Resources is the resource table served. Required.
	Resources []*api.ResourceInfo
	// Authenticator maps a bearer token to a user. Required.
	Authenticator Authenticator
	// Authorizer, when set, is asked before every resource request.
	Authorizer Authorizer
	// Hooks run inside the write transaction, keyed "resource" (core) or
	// "resource.group" ("services", "deployments.apps").
	Hooks map[string]TxnHook
	// Patcher applies a PATCH body; nil uses merge/JSON patch (strategic
	// merge falls back to merge patch).
	Patcher Patcher
	// PodLogs serves pods/log; nil answers 404.
	PodLogs PodLogsFunc
	// Registerer receives the metrics; Gatherer serves /metrics. When both
	// are nil a private registry is used for both.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Logger for request logs; nil discards.
	Logger *slog.Logger
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Version is served at /version; empty fields get defaults.
	Version VersionInfo
	// Ready gates /readyz; nil means always ready.
	Ready func() bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// User is an authenticated caller.
type User struct {
	Name   string
	Groups []string
}

// Authenticator maps a bearer token to a user.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (User, bool)
}

// StaticTokens is an Authenticator over a fixed token table.
type StaticTokens map[string]User

// Authenticate implements Authenticator, comparing tokens in constant time.
func (t StaticTokens) Authenticate(ctx context.Context, token string) (User, bool) {
	var found User
	ok := 0
	for k, u := range t {
		if subtle.ConstantTimeCompare([]byte(k), []byte(token)) == 1 {
			found, ok = u, 1
		}
	}
	return found, ok == 1
}

// Attributes describe a request for authorization.
type Attributes struct {
	Verb        string // get list watch create update patch delete deletecollection
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
}

// Authorizer decides whether user may do a request; a non-nil error denies
// it (a *StatusError is sent as is, anything else as 403 Forbidden).
type Authorizer interface {
	Authorize(ctx context.Context, user User, attrs Attributes) error
}

// Patcher applies patch (of the given content type) to original, both JSON.
type Patcher func(ctx context.Context, contentType string, original, patch []byte) ([]byte, error)

// PodLogsFunc opens the log of a pod; q is the request's query
// (container, follow, tailLines, ...).
type PodLogsFunc func(ctx context.Context, namespace, name string, q url.Values) (io.ReadCloser, error)

// VersionInfo is the /version document.
type VersionInfo struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// Op is the kind of write a hook is asked to admit.
type Op string

const (
	OpCreate Op = "Create"
	OpUpdate Op = "Update"
	OpDelete Op = "Delete"
)

// Admission is one write offered to a TxnHook.
//
// Create: Obj is the new object (the hook may mutate it), Old is nil.
// Update: Obj is the new object (mutable), Old the stored one.
// Delete: Obj is the object being removed in its final state, Old is nil;
// Delete is offered exactly when the key is really removed (also when an
// update removes the last finalizer of an object being deleted).
type Admission struct {
	Op          Op
	Obj         api.Object
	Old         api.Object
	Subresource string // "status", "scale", "binding", "finalize" or ""
	// DryRun is true when the transaction will be rolled back on purpose.
	DryRun bool
}

// Outcome lets a hook learn how its transaction ended. Exactly one of the
// funcs runs (when set), after Store.Update has returned.
type Outcome struct {
	OnCommit func()
	OnAbort  func()
}

// TxnHook runs inside the store transaction after defaulting and
// validation. It may mutate a.Obj and write other keys through
// Server.PutObject/DeleteObject on tx. An error aborts the transaction; a
// *StatusError error is sent to the client unchanged.
type TxnHook interface {
	Admit(ctx context.Context, tx store.Txn, a Admission) (Outcome, error)
}

// ValidatingHook is a TxnHook that never changes a.Obj: it only admits or
// refuses (and may write other keys). The server then encodes an update
// before its transaction, keeping the encoding of a big object out of the
// store's commit loop.
type ValidatingHook interface {
	TxnHook
	// ValidatesOnly marks the hook; it is never called.
	ValidatesOnly()
}
