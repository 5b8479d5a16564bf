package runtime

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// ImageInfo describes one image of a runtime that has images
// (runtime/containerd).
type ImageInfo struct {
	Name    string
	Digest  string // the manifest (or index) digest
	Size    int64  // compressed size of the platform's content
	Created time.Time
}

// PullProgress is one step of a pull, as it is reported to the caller's
// progress function: a blob (the index, a manifest, the config or a layer)
// about to be fetched (Fetched 0), or, periodically, how far the fetch of
// a blob in flight is (0 < Fetched <= Size).
type PullProgress struct {
	Ref       string
	MediaType string
	Digest    string
	Size      int64
	Fetched   int64
}

// DefaultPullPolicy is the pull policy Kubernetes gives a container that
// sets none: Always for an image tagged ":latest" or untagged (and not
// pinned by digest), IfNotPresent otherwise.
func DefaultPullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	last := image[strings.LastIndexByte(image, '/')+1:]
	i := strings.LastIndexByte(last, ':')
	if i < 0 || last[i+1:] == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// AuthConfig is one credential for a registry, for a pull: what the agent
// found in the pod's image pull secrets (package keyring). It prints
// (String, GoString, LogValue) without its password.
type AuthConfig struct {
	Username, Password string
}

// String shows the user name only.
func (a AuthConfig) String() string {
	return fmt.Sprintf("{Username:%s Password:<redacted>}", a.Username)
}

// GoString shows the user name only (%#v).
func (a AuthConfig) GoString() string { return a.String() }

// LogValue shows the user name only (log/slog).
func (a AuthConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("username", a.Username), slog.String("password", "<redacted>"))
}
