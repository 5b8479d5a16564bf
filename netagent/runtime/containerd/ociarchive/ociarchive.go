package ociarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	goruntime "runtime"
	"sort"
	"strings"
	"time"
)

// Media types written.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"
)

// Annotations on the manifest descriptor of index.json.
const (
	AnnotationImageName = "io.containerd.image.name"
	AnnotationRefName   = "org.opencontainers.image.ref.name"
)

// File is one regular file of the image.
type File struct {
	// Path inside the image, e.g. "/skiff".
	Path string
	// Source is a host file to copy; Data is used when Source is empty.
	Source string
	Data   []byte
	// Mode is the file's permission bits (default 0755).
	Mode fs.FileMode
}

// Image describes a single-layer image.
type Image struct {
	// Name is the full reference, e.g. "skiff.local/netexec:dev". Required.
	Name  string
	Files []File
	// Entrypoint, Cmd, Env, WorkingDir and User go to the image config.
	Entrypoint, Cmd, Env []string
	WorkingDir, User     string
	// Created is the files' and the config's time (default the Unix epoch).
	Created time.Time
	// Architecture (default the running GOARCH); the OS is linux.
	Architecture string
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform of a manifest.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	Created      string `json:"created"`
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Entrypoint []string `json:"Entrypoint,omitempty"`
		Cmd        []string `json:"Cmd,omitempty"`
		Env        []string `json:"Env,omitempty"`
		WorkingDir string   `json:"WorkingDir,omitempty"`
		User       string   `json:"User,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// built is an image's blobs.
type built struct {
	layer, config, manifest                   []byte
	layerDigest, configDigest, manifestDigest string
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func (img *Image) build() (*built, error) {
	if img.Name == "" {
		return nil, errors.New("ociarchive: Image.Name is required")
	}
	created := img.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	layer, err := img.layer(created)
	if err != nil {
		return nil, err
	}
	b := &built{layer: layer, layerDigest: digestOf(layer)}
	var cfg imageConfig
	cfg.Created = created.Format(time.RFC3339)
	cfg.Architecture = img.Architecture
	if cfg.Architecture == "" {
		cfg.Architecture = goruntime.GOARCH
	}
	cfg.OS = "linux"
	cfg.Config.Entrypoint, cfg.Config.Cmd, cfg.Config.Env, cfg.Config.WorkingDir = img.Entrypoint, img.Cmd, img.Env, img.WorkingDir
	cfg.Config.User = img.User
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{b.layerDigest}
	if b.config, err = json.Marshal(cfg); err != nil {
		return nil, fmt.Errorf("ociarchive: config: %w", err)
	}
	b.configDigest = digestOf(b.config)
	m := manifest{
		SchemaVersion: 2, MediaType: MediaTypeManifest,
		Config: Descriptor{MediaType: MediaTypeConfig, Digest: b.configDigest, Size: int64(len(b.config))},
		Layers: []Descriptor{{MediaType: MediaTypeLayer, Digest: b.layerDigest, Size: int64(len(layer))}},
	}
	if b.manifest, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("ociarchive: manifest: %w", err)
	}
	b.manifestDigest = digestOf(b.manifest)
	return b, nil
}

// layer is the uncompressed layer tar: the files and their parent dirs.
func (img *Image) layer(mtime time.Time) ([]byte, error) {
	type entry struct {
		name string
		f    *File
	}
	dirs := map[string]bool{}
	var files []entry
	for i := range img.Files {
		f := &img.Files[i]
		p := path.Clean("/" + f.Path)
		if strings.Contains(f.Path, "..") || p == "/" {
			return nil, fmt.Errorf("ociarchive: bad file path %q", f.Path)
		}
		name := strings.TrimPrefix(p, "/")
		files = append(files, entry{name, f})
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("ociarchive: layer: %w", err)
		}
	}
	for _, e := range files {
		data := e.f.Data
		if e.f.Source != "" {
			var err error
			if data, err = os.ReadFile(e.f.Source); err != nil {
				return nil, fmt.Errorf("ociarchive: %w", err)
			}
		}
		mode := e.f.Mode.Perm()
		if mode == 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: int64(mode), Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, fmt.Errorf("ociarchive: layer: %w", err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("ociarchive: layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ociarchive: layer: %w", err)
	}
	return buf.Bytes(), nil
}

// tarFile writes one regular file (or a directory when data is nil and
// name ends in /) to tw.
func tarFile(tw *tar.Writer, name string, data []byte, mtime time.Time) error {
	if strings.HasSuffix(name, "/") {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX})
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// tag is the part of a reference after the last ':' that follows the
// last '/' ("latest" when there is none).
func tag(ref string) string {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[i+1:]
	}
	return "latest"
}

// WriteOCI writes img as an OCI image-layout tar to w and returns the
// manifest's descriptor.
func WriteOCI(w io.Writer, img Image) (Descriptor, error) {
	b, err := img.build()
	if err != nil {
		return Descriptor{}, err
	}
	arch := img.Architecture
	if arch == "" {
		arch = goruntime.GOARCH
	}
	md := Descriptor{
		MediaType: MediaTypeManifest, Digest: b.manifestDigest, Size: int64(len(b.manifest)),
		Annotations: map[string]string{AnnotationImageName: img.Name, AnnotationRefName: tag(img.Name)},
		Platform:    &Platform{Architecture: arch, OS: "linux"},
	}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{md}})
	if err != nil {
		return Descriptor{}, fmt.Errorf("ociarchive: index: %w", err)
	}
	mtime := time.Unix(0, 0)
	tw := tar.NewWriter(w)
	blob := func(d string) string { return "blobs/sha256/" + strings.TrimPrefix(d, "sha256:") }
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idx},
		{"blobs/", nil},
		{"blobs/sha256/", nil},
		{blob(b.layerDigest), b.layer},
		{blob(b.configDigest), b.config},
		{blob(b.manifestDigest), b.manifest},
	} {
		if err := tarFile(tw, f.name, f.data, mtime); err != nil {
			return Descriptor{}, fmt.Errorf("ociarchive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return Descriptor{}, fmt.Errorf("ociarchive: %w", err)
	}
	return md, nil
}

// WriteDocker writes img as a `docker save` archive (manifest.json with
// RepoTags, the config and layer.tar) to w.
func WriteDocker(w io.Writer, img Image) error {
	b, err := img.build()
	if err != nil {
		return err
	}
	hexOf := func(d string) string { return strings.TrimPrefix(d, "sha256:") }
	ref := img.Name
	type dockerManifest struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	mf, err := json.Marshal([]dockerManifest{{
		Config:   hexOf(b.configDigest) + ".json",
		RepoTags: []string{ref},
		Layers:   []string{hexOf(b.layerDigest) + "/layer.tar"},
	}})
	if err != nil {
		return fmt.Errorf("ociarchive: %w", err)
	}
	mtime := time.Unix(0, 0)
	tw := tar.NewWriter(w)
	for _, f := range []struct {
		name string
		data []byte
	}{
		{hexOf(b.layerDigest) + "/", nil},
		{hexOf(b.layerDigest) + "/layer.tar", b.layer},
		{hexOf(b.configDigest) + ".json", b.config},
		{"manifest.json", mf},
	} {
		if err := tarFile(tw, f.name, f.data, mtime); err != nil {
			return fmt.Errorf("ociarchive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("ociarchive: %w", err)
	}
	return nil
}

// Layout is an image's blobs as a registry serves them (see Blobs).
type Layout struct {
	Manifest, Config, Layer Blob
}

// Blob is one piece of content.
type Blob struct {
	MediaType, Digest string
	Data              []byte
}

// Blobs returns img's manifest, config and layer, for a test registry.
func Blobs(img Image) (Layout, error) {
	b, err := img.build()
	if err != nil {
		return Layout{}, err
	}
	return Layout{
		Manifest: Blob{MediaTypeManifest, b.manifestDigest, b.manifest},
		Config:   Blob{MediaTypeConfig, b.configDigest, b.config},
		Layer:    Blob{MediaTypeLayer, b.layerDigest, b.layer},
	}, nil
}
