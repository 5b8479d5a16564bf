package ociarchive

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Registry is a read-only OCI distribution endpoint (GET and HEAD of
// /v2/, manifests by tag or digest, blobs by digest) over images added
// with Add: enough for containerd to pull from, e.g. on 127.0.0.1 in a
// test or a demo without a registry. It keeps everything in memory.
type Registry struct {
	mu        sync.Mutex
	manifests map[string]Blob // "repo:tag" and "repo@digest"
	blobs     map[string]Blob // "repo@digest"
	fetches   int
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{manifests: map[string]Blob{}, blobs: map[string]Blob{}}
}

// Add serves img as repo:tag (repo without the host, e.g. "netexec").
func (g *Registry) Add(repo, tag string, img Image) error {
	l, err := Blobs(img)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.manifests[repo+":"+tag] = l.Manifest
	g.manifests[repo+"@"+l.Manifest.Digest] = l.Manifest
	g.blobs[repo+"@"+l.Config.Digest] = l.Config
	g.blobs[repo+"@"+l.Layer.Digest] = l.Layer
	return nil
}

// BlobFetches counts the blob GETs served.
func (g *Registry) BlobFetches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fetches
}

func (g *Registry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/v2/" || r.URL.Path == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	rest, _ := strings.CutPrefix(r.URL.Path, "/v2/")
	g.mu.Lock()
	var (
		b  Blob
		ok bool
	)
	if repo, ref, found := strings.Cut(rest, "/manifests/"); found {
		sep := ":"
		if strings.HasPrefix(ref, "sha256:") {
			sep = "@"
		}
		b, ok = g.manifests[repo+sep+ref]
	} else if repo, dgst, found := strings.Cut(rest, "/blobs/"); found {
		b, ok = g.blobs[repo+"@"+dgst]
		if ok && r.Method == http.MethodGet {
			g.fetches++
		}
	}
	g.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errors":[{"code":"NAME_UNKNOWN","message":"not found"}]}`)
		return
	}
	w.Header().Set("Content-Type", b.MediaType)
	w.Header().Set("Docker-Content-Digest", b.Digest)
	w.Header().Set("Content-Length", strconv.Itoa(len(b.Data)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(b.Data)
	}
}
