package ociarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func testImage() Image {
	return Image{
		Name:       "skiff.local/netexec:dev",
		Files:      []File{{Path: "/bin/tool", Data: []byte("#!tool"), Mode: 0o700}, {Path: "etc/motd", Data: []byte("hi\n")}},
		Entrypoint: []string{"/bin/tool"}, Cmd: []string{"serve"}, Env: []string{"A=1"}, WorkingDir: "/",
	}
}

// untar reads a tar into name -> content.
func untar(t *testing.T, b []byte) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files, hdrs := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, hdrs
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name], hdrs[h.Name] = data, h
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestWriteOCI(t *testing.T) {
	var buf bytes.Buffer
	desc, err := WriteOCI(&buf, testImage())
	if err != nil {
		t.Fatal(err)
	}
	files, _ := untar(t, buf.Bytes())
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout: %q", files["oci-layout"])
	}
	var idx index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil || len(idx.Manifests) != 1 {
		t.Fatalf("index.json: %s %v", files["index.json"], err)
	}
	md := idx.Manifests[0]
	if md.Digest != desc.Digest || md.Annotations[AnnotationImageName] != "skiff.local/netexec:dev" || md.Annotations[AnnotationRefName] != "dev" {
		t.Fatalf("manifest descriptor: %+v", md)
	}
	// Every blob is stored under its own digest.
	blob := func(d string) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d, "sha256:")]
		if !ok || sha(b) != d {
			t.Fatalf("blob %s missing or corrupt", d)
		}
		return b
	}
	var m manifest
	if err := json.Unmarshal(blob(md.Digest), &m); err != nil || len(m.Layers) != 1 {
		t.Fatalf("manifest: %v %+v", err, m)
	}
	var cfg imageConfig
	if err := json.Unmarshal(blob(m.Config.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Config.Entrypoint[0] != "/bin/tool" || cfg.Config.Cmd[0] != "serve" ||
		cfg.RootFS.DiffIDs[0] != m.Layers[0].Digest {
		t.Fatalf("config: %+v", cfg)
	}
	layer, hdrs := untar(t, blob(m.Layers[0].Digest))
	if string(layer["bin/tool"]) != "#!tool" || hdrs["bin/tool"].Mode != 0o700 || string(layer["etc/motd"]) != "hi\n" ||
		hdrs["etc/motd"].Mode != 0o755 || hdrs["bin/"] == nil || hdrs["etc/"] == nil {
		t.Fatalf("layer: %v", hdrs)
	}
	// Deterministic.
	var again bytes.Buffer
	if _, err := WriteOCI(&again, testImage()); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("two writes of one image differ")
	}
}

func TestWriteDocker(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteDocker(&buf, testImage()); err != nil {
		t.Fatal(err)
	}
	files, _ := untar(t, buf.Bytes())
	var mf []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &mf); err != nil || len(mf) != 1 || mf[0].RepoTags[0] != "skiff.local/netexec:dev" {
		t.Fatalf("manifest.json: %s %v", files["manifest.json"], err)
	}
	if _, ok := files[mf[0].Config]; !ok {
		t.Fatalf("config %s missing", mf[0].Config)
	}
	if layer, ok := files[mf[0].Layers[0]]; !ok || sha(layer) != "sha256:"+strings.TrimSuffix(mf[0].Layers[0], "/layer.tar") {
		t.Fatal("layer missing or not named by its digest")
	}
}

func TestBadImages(t *testing.T) {
	for _, img := range []Image{
		{},
		{Name: "x", Files: []File{{Path: "../etc/passwd"}}},
		{Name: "x", Files: []File{{Path: "/"}}},
		{Name: "x", Files: []File{{Path: "/f", Source: "/nonexistent/file"}}},
	} {
		if _, err := WriteOCI(io.Discard, img); err == nil {
			t.Errorf("%+v accepted", img)
		}
	}
}

func TestRegistry(t *testing.T) {
	g := NewRegistry()
	if err := g.Add("netexec", "v1", testImage()); err != nil {
		t.Fatal(err)
	}
	l, _ := Blobs(testImage())
	srv := httptest.NewServer(g)
	defer srv.Close()
	get := func(method, path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, _ := get("GET", "/v2/"); resp.StatusCode != 200 {
		t.Fatalf("/v2/: %d", resp.StatusCode)
	}
	for _, ref := range []string{"v1", l.Manifest.Digest} {
		resp, b := get("GET", "/v2/netexec/manifests/"+ref)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != MediaTypeManifest || resp.Header.Get("Docker-Content-Digest") != l.Manifest.Digest || sha(b) != l.Manifest.Digest {
			t.Fatalf("manifest %s: %d %v", ref, resp.StatusCode, resp.Header)
		}
	}
	if resp, b := get("HEAD", "/v2/netexec/blobs/"+l.Layer.Digest); resp.StatusCode != 200 || len(b) != 0 || g.BlobFetches() != 0 {
		t.Fatalf("HEAD blob: %d, %d bytes, %d fetches", resp.StatusCode, len(b), g.BlobFetches())
	}
	if resp, b := get("GET", "/v2/netexec/blobs/"+l.Layer.Digest); resp.StatusCode != 200 || sha(b) != l.Layer.Digest || g.BlobFetches() != 1 {
		t.Fatalf("GET blob: %d", resp.StatusCode)
	}
	for _, p := range []string{"/v2/netexec/manifests/v2", "/v2/other/manifests/v1", "/v2/netexec/blobs/sha256:00", "/v2/x"} {
		if resp, _ := get("GET", p); resp.StatusCode != 404 {
			t.Fatalf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, _ := get("PUT", "/v2/netexec/manifests/v1"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
}
