package cnitest

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/skiff-dev/skiff/netagent/cni"
)

// Namespaces is a fake cni.Namespaces: named files under a fake
// directory, each live (holding a namespace) or stale.
type Namespaces struct {
	mu      sync.Mutex
	dir     string
	files   map[string]bool // name -> live
	created int
}

var _ cni.Namespaces = (*Namespaces)(nil)

// NewNamespaces returns an empty directory called dir (nothing is made
// on disk).
func NewNamespaces(dir string) *Namespaces {
	return &Namespaces{dir: dir, files: map[string]bool{}}
}

// Create implements cni.Namespaces.
func (n *Namespaces) Create(name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.files[name]; ok {
		return "", fmt.Errorf("create %s: %w", name, fs.ErrExist)
	}
	n.files[name] = true
	n.created++
	return n.path(name), nil
}

// Delete implements cni.Namespaces.
func (n *Namespaces) Delete(name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.files, name)
	return nil
}

func (n *Namespaces) path(name string) string { return path.Join(n.dir, name) }

// Path implements cni.Namespaces.
func (n *Namespaces) Path(name string) string { return n.path(name) }

// List implements cni.Namespaces.
func (n *Namespaces) List() ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.files))
	for name := range n.files {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Exists implements cni.Namespaces.
func (n *Namespaces) Exists(name string) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.files[name]
	return ok, nil
}

// Live implements cni.Namespaces.
func (n *Namespaces) Live(name string) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.files[name], nil
}

// LiveAt reports whether path is a live namespace file here.
func (n *Namespaces) LiveAt(p string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	dir, name := path.Split(p)
	return path.Clean(dir) == path.Clean(n.dir) && n.files[name]
}

// ExistsAt reports whether path is a namespace file here, live or stale.
func (n *Namespaces) ExistsAt(p string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	dir, name := path.Split(p)
	_, ok := n.files[name]
	return path.Clean(dir) == path.Clean(n.dir) && ok
}

// MakeStale keeps the file but drops the namespace (a reboot).
func (n *Namespaces) MakeStale(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.files[name]; ok {
		n.files[name] = false
	}
}

// Created counts the namespaces ever created.
func (n *Namespaces) Created() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.created
}
