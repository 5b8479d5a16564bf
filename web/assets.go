package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
)

//go:embed assets
var assetFS embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	body, gz    []byte
	etag, ctype string
}

type assets struct {
	files map[string]*asset // by file name
	index *asset
}

// loadAssets reads the embedded files once, versions, gzips and hashes
// them. Every reference to an asset (in index.html, and the modules'
// `from './x.js'` imports) gets ?v=<hash of all assets>, served immutable,
// and index.html lists the modules as modulepreload links: a first visit
// fetches them in parallel, a later one revalidates only index.html.
func loadAssets() (*assets, error) {
	entries, err := fs.ReadDir(assetFS, "assets")
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	raw := map[string][]byte{}
	var names []string
	all := sha256.New()
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("web: assets: %w", err)
		}
		raw[e.Name()] = b
		names = append(names, e.Name())
		all.Write([]byte(e.Name()))
		all.Write(b)
	}
	if _, ok := raw["index.html"]; !ok {
		return nil, fmt.Errorf("web: assets: index.html missing")
	}
	ver := hex.EncodeToString(all.Sum(nil)[:6])
	imports := regexp.MustCompile(`(from\s+'\./[A-Za-z0-9_-]+\.js)'`)
	a := &assets{files: map[string]*asset{}}
	var preload strings.Builder
	for _, name := range names {
		if name == "index.html" {
			continue
		}
		b := raw[name]
		if strings.HasSuffix(name, ".js") {
			b = imports.ReplaceAll(b, []byte("${1}?v="+ver+"'"))
			if name != "app.js" {
				fmt.Fprintf(&preload, "<link rel=\"modulepreload\" href=\"/ui/assets/%s?v=%s\">\n", name, ver)
			}
		}
		a.files[name] = newAsset(name, b)
	}
	html := regexp.MustCompile(`(/ui/assets/[A-Za-z0-9_.-]+)"`).ReplaceAllString(string(raw["index.html"]), "${1}?v="+ver+`"`)
	html = strings.Replace(html, "<!--preload-->", preload.String(), 1)
	a.index = newAsset("index.html", []byte(html))
	return a, nil
}

func newAsset(name string, b []byte) *asset {
	sum := sha256.Sum256(b)
	f := &asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	f.ctype = mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		f.ctype = "text/javascript; charset=utf-8"
	case ".svg":
		f.ctype = "image/svg+xml"
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if buf.Len() < len(b) {
		f.gz = buf.Bytes()
	}
	return f
}

// serve writes f, gzipped when the client takes it, with its ETag.
func (f *asset) serve(w http.ResponseWriter, r *http.Request, cache string) {
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", cache)
	h.Set("ETag", f.etag)
	h.Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if f.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func (d *Dashboard) serveIndex(w http.ResponseWriter, r *http.Request) {
	d.assets.index.serve(w, r, "no-cache")
}

func (d *Dashboard) serveAsset(w http.ResponseWriter, r *http.Request) {
	f, ok := d.assets.files[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	cache := "no-cache"
	if r.URL.Query().Get("v") != "" {
		cache = "public, max-age=31536000, immutable"
	}
	f.serve(w, r, cache)
}

func (d *Dashboard) serveFavicon(w http.ResponseWriter, r *http.Request) {
	f, ok := d.assets.files["icon.svg"]
	if !ok {
		http.NotFound(w, r)
		return
	}
	f.serve(w, r, "public, max-age=86400")
}
