package apiserver

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/fields"
	"github.com/skiff-dev/skiff/store"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 3 << 20

// DefaultBodyTimeout is the time a request has to send its body when
// Config.BodyTimeout is 0 (kube-apiserver's default --request-timeout).
const DefaultBodyTimeout = 60 * time.Second

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
	// Actions serve the POSTs that store nothing (actions.go), keyed
	// "resource/sub" for a subresource of a served resource
	// ("serviceaccounts/token") or "resource.group" for a cluster-scoped
	// resource of its own ("selfsubjectreviews.authentication.k8s.io").
	Actions map[string]*Action
	// Reads serve computed, read-only resources (reads.go), keyed
	// "resource.group" ("pods.metrics.k8s.io").
	Reads map[string]*ReadOnly
	// Paths are extra non-resource GET paths, served after authentication
	// and authorization (Attributes.Path) as /metrics is.
	Paths map[string]http.Handler
	// Patcher applies a PATCH body; nil uses merge/JSON patch (strategic
	// merge falls back to merge patch).
	Patcher Patcher
	// PodLogs serves pods/log; nil answers 404.
	PodLogs PodLogsFunc
	// PodStream serves pods/exec, pods/attach and pods/portforward (the
	// HTTP upgrades); nil answers 404.
	PodStream PodStreamFunc
	// Registerer receives the metrics; Gatherer serves /metrics. When both
	// are nil a private registry is used for both.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Logger for request logs; nil discards.
	Logger *slog.Logger
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request may take to send its body
	// (a stalled body gets 408); 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxRequestsInFlight caps the reads (GET, HEAD) served at once and
	// MaxMutatingRequestsInFlight the writes; watches and pods/log are not
	// counted. Over the cap a request gets 429 (system:masters users
	// excepted). 0 means the default (400, 200), below 0 no limit.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
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
	UID    string
	Groups []string
	// Extra is what the authenticator adds (a ServiceAccount token's
	// pod and node), shown by a SelfSubjectReview.
	Extra map[string][]string
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

// Attributes describe a request for authorization: a resource request
// (Resource set), or a non-resource one (Path set: discovery, /metrics,
// OpenAPI, an unknown path), as Kubernetes' nonResourceURLs; a
// non-resource request's Verb is the lowercase HTTP method ("get").
type Attributes struct {
	Verb        string // get list watch create update patch delete deletecollection
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// FieldSelector is the parsed fieldSelector of a list or watch (nil:
	// none, or one that does not parse, which the handler then refuses
	// with 400). It is the selector the handler filters with, so an
	// authorizer may allow a list only when it narrows the result (a
	// node's pods: spec.nodeName=<node>).
	FieldSelector fields.Selector
	// Path is the URL path of a non-resource request; "" for a resource
	// request.
	Path string
}

// Authorizer decides whether user may do a request; a non-nil error denies
// it (a *StatusError is sent as is, anything else as 403 Forbidden). It is
// asked before every resource request and every authenticated
// non-resource request (Attributes.Path); /healthz, /livez, /readyz and
// /version are served to everyone without asking.
type Authorizer interface {
	Authorize(ctx context.Context, user User, attrs Attributes) error
}

// ViewAuthorizer is an Authorizer that may allow a read (get, list,
// watch) of a resource only as a narrowed view of each object: the server
// asks AuthorizeView instead of Authorize for reads of objects and their
// status (other subresources are asked Authorize), and passes every
// object it returns (the object of a get, the item of a list, the object
// of a watch event) through the View. A nil View returns the objects
// whole.
type ViewAuthorizer interface {
	Authorizer
	AuthorizeView(ctx context.Context, user User, attrs Attributes) (View, error)
}

// View rewrites one stored object (JSON) before a read returns it; the
// result must keep kind, apiVersion and metadata's name, namespace, uid
// and resourceVersion.
type View func(raw []byte) ([]byte, error)

// Patcher applies patch (of the given content type) to original, both JSON.
type Patcher func(ctx context.Context, contentType string, original, patch []byte) ([]byte, error)

// PodLogsFunc opens the log of a pod; q is the request's query
// (container, follow, tailLines, ...).
type PodLogsFunc func(ctx context.Context, namespace, name string, q url.Values) (io.ReadCloser, error)

// PodStreamFunc serves one pods/exec, pods/attach or pods/portforward
// request (sub) of an existing pod after authorization: it upgrades the
// connection (taking w over) or returns an error before writing anything,
// which the server sends as a Status.
type PodStreamFunc func(w http.ResponseWriter, r *http.Request, namespace, name, sub string) error

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
