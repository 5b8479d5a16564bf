package encrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind and APIVersion of the key file: kube-apiserver's
// EncryptionConfiguration, of which the file is a subset.
const (
	configKind       = "EncryptionConfiguration"
	configAPIVersion = "apiserver.config.k8s.io/v1"
)

// KeyPrefix is the key name prefix of the keys Create and Rotate make; the
// rest of the name is the UTC time the key was made.
const KeyPrefix = "aesgcmkey-"

// Keys is a loaded key file: the AES-GCM keys, the first of which
// encrypts, every one of which decrypts.
type Keys struct {
	path string
	keys []namedKey
}

type namedKey struct {
	name   string
	secret []byte
	aead   cipher.AEAD
}

// The JSON of the key file (kube-apiserver's EncryptionConfiguration).
type configFile struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Resources  []configResource `json:"resources"`
}

type configResource struct {
	Resources []string         `json:"resources"`
	Providers []configProvider `json:"providers"`
}

type configProvider struct {
	AESGCM   *configAESGCM `json:"aesgcm,omitempty"`
	Identity *struct{}     `json:"identity,omitempty"`
}

type configAESGCM struct {
	Keys []configKey `json:"keys"`
}

type configKey struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// Path is the key file's path.
func (k *Keys) Path() string { return k.path }

// Names are the key names, the encrypting key first.
func (k *Keys) Names() []string {
	out := make([]string, len(k.keys))
	for i, nk := range k.keys {
		out[i] = nk.name
	}
	return out
}

// WriteKey is the name of the key new values are encrypted with.
func (k *Keys) WriteKey() string { return k.keys[0].name }

func (k *Keys) find(name string) *namedKey {
	for i := range k.keys {
		if k.keys[i].name == name {
			return &k.keys[i]
		}
	}
	return nil
}

// Load reads the key file at path. A missing file is an error wrapping
// fs.ErrNotExist; anything else that is not a key file as Create writes it
// is an error naming the file and what is wrong.
func Load(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets encryption key file: %w", err)
	}
	k, err := parse(path, b)
	if err != nil {
		return nil, fmt.Errorf("secrets encryption key file %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("secrets encryption key file %s: %w", path, err)
		}
	}
	return k, nil
}

func parse(path string, b []byte) (*Keys, error) {
	var c configFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not JSON of an EncryptionConfiguration: %w", err)
	}
	if c.Kind != configKind || c.APIVersion != configAPIVersion {
		return nil, fmt.Errorf("kind %q apiVersion %q: want %s %s", c.Kind, c.APIVersion, configKind, configAPIVersion)
	}
	if len(c.Resources) != 1 || len(c.Resources[0].Resources) != 1 || c.Resources[0].Resources[0] != "secrets" {
		return nil, errors.New(`resources: want exactly one entry, for ["secrets"] (Skiff encrypts Secrets only)`)
	}
	ps := c.Resources[0].Providers
	if len(ps) == 0 || ps[0].AESGCM == nil {
		return nil, errors.New("resources[0].providers[0]: want aesgcm")
	}
	for i, p := range ps[1:] {
		if p.AESGCM != nil || p.Identity == nil {
			return nil, fmt.Errorf("resources[0].providers[%d]: want identity after aesgcm", i+1)
		}
	}
	k := &Keys{path: path}
	if len(ps[0].AESGCM.Keys) == 0 {
		return nil, errors.New("resources[0].providers[0].aesgcm.keys: no key")
	}
	for i, ck := range ps[0].AESGCM.Keys {
		field := fmt.Sprintf("resources[0].providers[0].aesgcm.keys[%d]", i)
		if ck.Name == "" || strings.ContainsAny(ck.Name, ": \t\n") {
			return nil, fmt.Errorf("%s.name %q: want a non-empty name without ':' or spaces", field, ck.Name)
		}
		if k.find(ck.Name) != nil {
			return nil, fmt.Errorf("%s.name %q: duplicate", field, ck.Name)
		}
		secret, err := base64.StdEncoding.DecodeString(ck.Secret)
		if err != nil {
			return nil, fmt.Errorf("%s.secret: not base64: %w", field, err)
		}
		nk, err := newKey(ck.Name, secret)
		if err != nil {
			return nil, fmt.Errorf("%s.secret: %w", field, err)
		}
		k.keys = append(k.keys, nk)
	}
	return k, nil
}

func newKey(name string, secret []byte) (namedKey, error) {
	switch len(secret) {
	case 16, 24, 32:
	default:
		return namedKey{}, fmt.Errorf("a key of %d bytes: want 16, 24 or 32 (AES-128, -192, -256)", len(secret))
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return namedKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return namedKey{}, err
	}
	return namedKey{name: name, secret: secret, aead: aead}, nil
}

// randomKey is a new AES-256 key named after now.
func randomKey(now time.Time) (namedKey, error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go >= 1.24)
	return newKey(KeyPrefix+now.UTC().Format("20060102T150405Z"), secret)
}

// Create makes the key file at path with one new AES-256 key (its
// directory 0700, the file 0600, written to a temporary file, synced and
// renamed). It fails if the file exists.
func Create(path string, now time.Time) (*Keys, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("secrets encryption key file %s: %w", path, fs.ErrExist)
	}
	nk, err := randomKey(now)
	if err != nil {
		return nil, err
	}
	k := &Keys{path: path, keys: []namedKey{nk}}
	if err := k.write(); err != nil {
		return nil, err
	}
	return k, nil
}

// Rotate puts a new AES-256 key first in the file (it encrypts from now
// on); the older keys stay after it, for reading what they encrypted.
func (k *Keys) Rotate(now time.Time) error {
	nk, err := randomKey(now)
	if err != nil {
		return err
	}
	if k.find(nk.name) != nil {
		return fmt.Errorf("secrets encryption key file %s: a key named %q exists (rotate again in a second)", k.path, nk.name)
	}
	next := &Keys{path: k.path, keys: append([]namedKey{nk}, k.keys...)}
	if err := next.write(); err != nil {
		return err
	}
	k.keys = next.keys
	return nil
}

func (k *Keys) write() error {
	aes := &configAESGCM{}
	for _, nk := range k.keys {
		aes.Keys = append(aes.Keys, configKey{Name: nk.name, Secret: base64.StdEncoding.EncodeToString(nk.secret)})
	}
	c := configFile{Kind: configKind, APIVersion: configAPIVersion, Resources: []configResource{{
		Resources: []string{"secrets"},
		Providers: []configProvider{{AESGCM: aes}, {Identity: &struct{}{}}},
	}}}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := writeFile(k.path, b); err != nil {
		return fmt.Errorf("secrets encryption key file %s: %w", k.path, err)
	}
	return nil
}

// writeFile writes b to path through a synced temporary file renamed over
// it, in a 0700 directory, at 0600.
func writeFile(path string, b []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
