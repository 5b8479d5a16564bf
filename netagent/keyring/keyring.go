package keyring

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// AuthConfig is one credential for a registry (runtime.AuthConfig).
type AuthConfig = runtime.AuthConfig

// dockerConfig is the "auths" map of a config.json, or a whole .dockercfg.
type dockerConfig map[string]entry

type entry struct{ AuthConfig }

// UnmarshalJSON reads username, password and auth (which wins).
func (e *entry) UnmarshalJSON(b []byte) error {
	var raw struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Auth     string `json:"auth"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.Username, e.Password = raw.Username, raw.Password
	if raw.Auth == "" {
		return nil
	}
	u, p, err := decodeAuth(raw.Auth)
	if err != nil {
		return err
	}
	e.Username, e.Password = u, p
	return nil
}

var errAuthField = errors.New("unable to parse auth field, must be formatted as base64(username:password)")

func decodeAuth(s string) (string, string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", "", errAuthField
	}
	u, p, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", errAuthField
	}
	return u, strings.Trim(p, "\x00"), nil
}

// Keyring is the credentials of a pod's pull secrets, indexed by
// registry key.
type Keyring struct {
	index []string // reverse sorted
	creds map[string][]AuthConfig
}

// FromSecrets builds the keyring of secrets, in order. The error names
// the secret, never its contents.
func FromSecrets(secrets []*api.Secret) (*Keyring, error) {
	k := &Keyring{creds: map[string][]AuthConfig{}}
	for _, s := range secrets {
		var cfg dockerConfig
		switch {
		case s.Type == api.SecretTypeDockerConfigJSON && len(s.Data[api.DockerConfigJSONKey]) > 0:
			var j struct {
				Auths dockerConfig `json:"auths"`
			}
			if err := json.Unmarshal(s.Data[api.DockerConfigJSONKey], &j); err != nil {
				return nil, fmt.Errorf("secret %q: %s: %w", s.Name, api.DockerConfigJSONKey, err)
			}
			cfg = j.Auths
		case s.Type == api.SecretTypeDockercfg && len(s.Data[api.DockerConfigKey]) > 0:
			if err := json.Unmarshal(s.Data[api.DockerConfigKey], &cfg); err != nil {
				return nil, fmt.Errorf("secret %q: %s: %w", s.Name, api.DockerConfigKey, err)
			}
		default:
			continue
		}
		k.add(cfg)
	}
	slices.Sort(k.index)
	k.index = slices.Compact(k.index)
	slices.Reverse(k.index)
	return k, nil
}

// add indexes cfg's entries; map order does not matter as entries of one
// key keep the order of the secrets and the index is sorted.
func (k *Keyring) add(cfg dockerConfig) {
	keys := make([]string, 0, len(cfg))
	for loc := range cfg {
		keys = append(keys, loc)
	}
	slices.Sort(keys)
	for _, loc := range keys {
		v := loc
		if !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
			v = "https://" + v
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			continue // the kubelet ignores an entry it cannot parse
		}
		p := u.Path
		if strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v1/") {
			p = p[3:]
		}
		key := u.Host
		if p != "" && p != "/" {
			key += p
		}
		k.creds[key] = append(k.creds[key], cfg[loc].AuthConfig)
		k.index = append(k.index, key)
	}
}

const defaultRegistryHost = "index.docker.io"

// Lookup returns the credentials for image, a repository without tag
// ("docker.io/library/busybox", "127.0.0.1:5000/app"), in the order to
// try them; false means none (pull anonymously).
func (k *Keyring) Lookup(image string) ([]AuthConfig, bool) {
	if k == nil {
		return nil, false
	}
	var out []AuthConfig
	for _, key := range k.index {
		if match(key, image) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) > 0 {
		return out, true
	}
	if isDefaultRegistry(image) {
		if c, ok := k.creds[defaultRegistryHost]; ok {
			return c, true
		}
	}
	return nil, false
}

// isDefaultRegistry: does image pull from Docker Hub?
func isDefaultRegistry(image string) bool {
	first, _, found := strings.Cut(image, "/")
	if first == "" {
		return false
	}
	if !found || first == "docker.io" || first == defaultRegistryHost {
		return true
	}
	return !strings.ContainsAny(first, ".:")
}

// match is the kubelet's URLsMatch of a key (a glob) and an image, both
// schemeless.
func match(glob, target string) bool {
	g, err1 := url.Parse("//" + glob)
	t, err2 := url.Parse("//" + target)
	if err1 != nil || err2 != nil {
		return false
	}
	gParts, gPort := splitHost(g.Host)
	tParts, tPort := splitHost(t.Host)
	if gPort != tPort || len(gParts) != len(tParts) || !strings.HasPrefix(t.Path, g.Path) {
		return false
	}
	for i := range gParts {
		if ok, err := path.Match(gParts[i], tParts[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitHost(hostport string) ([]string, string) {
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	return strings.Split(host, "."), port
}
