package kubectl

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skiff-dev/skiff/api"
)

// The sources of `create configmap` and `create secret generic`, as
// kubectl reads them (k8s.io/kubectl/pkg/util: AddFromEnvFile and the
// create configmap/secret commands):
//
//   - --from-literal=KEY=VALUE, split at the first "=";
//   - --from-file=PATH: a file under its base name, or every regular file
//     of a directory (not its subdirectories) under its name;
//     --from-file=KEY=PATH a file under KEY (a directory is refused);
//   - --from-env-file=PATH: KEY=VALUE lines; blank lines and lines
//     starting with "#" are skipped, a UTF-8 BOM is dropped, a KEY without
//     "=" takes the value of that variable in the environment, the key's
//     leading spaces go and the value is kept as it is; it cannot be
//     combined with the other two;
//   - a key given twice is refused, naming the object.
//
// Key names and sizes are the server's to check (422 naming the field).

type configSources struct {
	files, literals, envFiles []string
}

func (c *configSources) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&c.files, "from-file", nil, "key file (or directory) as [key=]source, repeatable")
	cmd.Flags().StringArrayVar(&c.literals, "from-literal", nil, "key=value, repeatable")
	cmd.Flags().StringArrayVar(&c.envFiles, "from-env-file", nil, "file of KEY=VALUE lines, repeatable")
}

// entry is one key and its value.
type entry struct {
	key   string
	value []byte
}

// read returns the sources' entries in flag order (literals, files, env
// files, as kubectl adds them).
func (c *configSources) read(getenv func(string) string) ([]entry, error) {
	if len(c.envFiles) > 0 && (len(c.files) > 0 || len(c.literals) > 0) {
		return nil, usageError("from-env-file cannot be combined with from-file or from-literal")
	}
	var out []entry
	for _, l := range c.literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, usageError("invalid literal source %s, expected key=value", l)
		}
		out = append(out, entry{k, []byte(v)})
	}
	for _, f := range c.files {
		key, path, named := strings.Cut(f, "=")
		if !named {
			path, key = f, ""
		} else if key == "" || path == "" {
			return nil, usageError("key names or file paths cannot be empty")
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, usageError("error reading %s: no such file or directory", path)
		}
		if !st.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, usageError("error reading %s: %v", path, err)
			}
			if key == "" {
				key = filepath.Base(path)
			}
			out = append(out, entry{key, b})
			continue
		}
		if named {
			return nil, usageError("cannot give a key name for a directory path")
		}
		des, err := os.ReadDir(path)
		if err != nil {
			return nil, usageError("error listing files in %s: %v", path, err)
		}
		for _, de := range des {
			p := filepath.Join(path, de.Name())
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, usageError("error reading %s: %v", p, err)
			}
			out = append(out, entry{de.Name(), b})
		}
	}
	for _, f := range c.envFiles {
		es, err := readEnvFile(f, getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

func readEnvFile(path string, getenv func(string) string) ([]entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("error reading %s: no such file or directory", path)
	}
	var out []entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if !utf8.Valid(line) {
			return nil, usageError("env file %s contains invalid utf8 bytes at line %d: %v", path, n, line)
		}
		s := strings.TrimLeft(string(line), " \t")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			v = getenv(k)
		}
		if k == "" {
			return nil, usageError("env file %s: line %d has no key", path, n)
		}
		out = append(out, entry{k, []byte(v)})
	}
	return out, sc.Err()
}

// unique refuses a key given twice.
func unique(es []entry, kind, name string) error {
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.key] {
			return usageError("cannot add key %s, another key by that name already exists in data for %s %q", e.key, kind, name)
		}
		seen[e.key] = true
	}
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func newCreateConfigMapCommand(g *globals, o *createOptions) *cobra.Command {
	var src configSources
	cmd := &cobra.Command{
		Use:     "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--from-env-file=source]",
		Aliases: []string{"cm"},
		Short:   "Create a ConfigMap from files, directories, literals or env files",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return o.generated(cmd, g, "configmaps", func(s *session) (map[string]any, error) {
				es, err := src.read(s.env.Getenv)
				if err != nil {
					return nil, err
				}
				if err := unique(es, "ConfigMap", name); err != nil {
					return nil, err
				}
				// Text is data; anything that is not UTF-8 is binaryData.
				data, bin := map[string]any{}, map[string]any{}
				for _, e := range es {
					if utf8.Valid(e.value) {
						data[e.key] = string(e.value)
					} else {
						bin[e.key] = b64(e.value)
					}
				}
				obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}
				if len(data) > 0 {
					obj["data"] = data
				}
				if len(bin) > 0 {
					obj["binaryData"] = bin
				}
				return obj, nil
			})
		},
	}
	src.addFlags(cmd)
	return cmd
}

func newCreateSecretCommand(g *globals, o *createOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret generic|tls|docker-registry NAME",
		Short: "Create a Secret: generic (from files, literals or env files), tls, or docker-registry",
	}
	secret := func(name, typ string, data map[string]any) map[string]any {
		obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name}, "data": data}
		if typ != "" {
			obj["type"] = typ
		}
		return obj
	}

	var src configSources
	var typ string
	generic := &cobra.Command{
		Use:   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--from-env-file=source]",
		Short: "Create a Secret from files, directories, literals or env files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return o.generated(cmd, g, "secrets", func(s *session) (map[string]any, error) {
				es, err := src.read(s.env.Getenv)
				if err != nil {
					return nil, err
				}
				if err := unique(es, "Secret", name); err != nil {
					return nil, err
				}
				data := map[string]any{}
				for _, e := range es {
					data[e.key] = b64(e.value)
				}
				return secret(name, typ, data), nil
			})
		},
	}
	src.addFlags(generic)
	generic.Flags().StringVar(&typ, "type", "", "the Secret's type (default Opaque)")

	var certFile, keyFile string
	tlsCmd := &cobra.Command{
		Use:   "tls NAME --cert=path/to/cert/file --key=path/to/key/file",
		Short: "Create a TLS Secret from a PEM certificate and its key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if certFile == "" || keyFile == "" {
				return usageError("requires both --cert and --key")
			}
			return o.generated(cmd, g, "secrets", func(*session) (map[string]any, error) {
				cert, err := os.ReadFile(certFile)
				if err != nil {
					return nil, usageError("error reading %s: %v", certFile, err)
				}
				key, err := os.ReadFile(keyFile)
				if err != nil {
					return nil, usageError("error reading %s: %v", keyFile, err)
				}
				if _, err := tls.X509KeyPair(cert, key); err != nil {
					return nil, usageError("failed to load key pair %v", err)
				}
				return secret(name, api.SecretTypeTLS, map[string]any{"tls.crt": b64(cert), "tls.key": b64(key)}), nil
			})
		},
	}
	tlsCmd.Flags().StringVar(&certFile, "cert", "", "PEM certificate file")
	tlsCmd.Flags().StringVar(&keyFile, "key", "", "PEM private key file")

	var server, user, password, email string
	var regFiles []string
	reg := &cobra.Command{
		Use:   "docker-registry NAME --docker-username=user --docker-password=password [--docker-email=email] [--docker-server=string] [--from-file=[key=]source]",
		Short: "Create a Secret for image pulls from a registry (kubernetes.io/dockerconfigjson)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if len(regFiles) == 0 && (user == "" || password == "") {
				return usageError("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required")
			}
			return o.generated(cmd, g, "secrets", func(s *session) (map[string]any, error) {
				data := map[string]any{}
				if len(regFiles) > 0 {
					es, err := (&configSources{files: regFiles}).read(s.env.Getenv)
					if err != nil {
						return nil, err
					}
					for _, e := range es {
						data[e.key] = b64(e.value)
					}
				} else {
					auth := map[string]any{"username": user, "password": password, "auth": b64([]byte(user + ":" + password))}
					if email != "" {
						auth["email"] = email
					}
					cfg, err := json.Marshal(map[string]any{"auths": map[string]any{server: auth}})
					if err != nil {
						return nil, err
					}
					data[api.DockerConfigJSONKey] = b64(cfg)
				}
				return secret(name, api.SecretTypeDockerConfigJSON, data), nil
			})
		},
	}
	reg.Flags().StringVar(&server, "docker-server", "https://index.docker.io/v1/", "the registry's address")
	reg.Flags().StringVar(&user, "docker-username", "", "user name for the registry")
	reg.Flags().StringVar(&password, "docker-password", "", "password for the registry")
	reg.Flags().StringVar(&email, "docker-email", "", "email for the registry")
	reg.Flags().StringArrayVar(&regFiles, "from-file", nil, "key file as [key=]source (a .dockerconfigjson), repeatable")

	cmd.AddCommand(generic, tlsCmd, reg)
	return cmd
}
