package pki

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Names written into a kubeconfig by WriteKubeconfig.
const (
	KubeconfigCluster = "skiff"
	KubeconfigContext = "skiff"
	defaultNamespace  = "default"
)

// Kubeconfig is what a client needs from a kubeconfig's current context.
type Kubeconfig struct {
	// Context is the name of the current context.
	Context string
	// Server is the API server URL.
	Server string
	// CAPEM is the CA certificate bundle to trust, from
	// certificate-authority-data or the certificate-authority file; nil when
	// the kubeconfig names none (trust the system roots).
	CAPEM []byte
	// InsecureSkipTLSVerify is the cluster's insecure-skip-tls-verify.
	InsecureSkipTLSVerify bool
	// Token is the bearer token, from token or tokenFile; empty when the
	// user has none.
	Token string
	// Namespace is the context's namespace, "default" when unset.
	Namespace string
}

// kubeconfigFile is the kubeconfig YAML (the subset Skiff reads and
// writes), with the field names of client-go's clientcmd/api/v1.
type kubeconfigFile struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Preferences    map[string]any `json:"preferences"`
	Clusters       []namedCluster `json:"clusters"`
	Users          []namedUser    `json:"users"`
	Contexts       []namedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
}

type namedCluster struct {
	Name    string       `json:"name"`
	Cluster clusterEntry `json:"cluster"`
}

type clusterEntry struct {
	Server                   string `json:"server"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	CertificateAuthority     string `json:"certificate-authority,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
}

type namedUser struct {
	Name string    `json:"name"`
	User userEntry `json:"user"`
}

type userEntry struct {
	Token     string `json:"token,omitempty"`
	TokenFile string `json:"tokenFile,omitempty"`
}

type namedContext struct {
	Name    string       `json:"name"`
	Context contextEntry `json:"context"`
}

type contextEntry struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// renderKubeconfig returns the kubeconfig YAML WriteKubeconfig writes.
func renderKubeconfig(server string, caPEM []byte, user, token string) ([]byte, error) {
	kc := kubeconfigFile{
		APIVersion:  "v1",
		Kind:        "Config",
		Preferences: map[string]any{},
		Clusters: []namedCluster{{
			Name:    KubeconfigCluster,
			Cluster: clusterEntry{Server: server, CertificateAuthorityData: caPEM},
		}},
		Users: []namedUser{{Name: user, User: userEntry{Token: token}}},
		Contexts: []namedContext{{
			Name:    KubeconfigContext,
			Context: contextEntry{Cluster: KubeconfigCluster, User: user, Namespace: defaultNamespace},
		}},
		CurrentContext: KubeconfigContext,
	}
	out, err := yaml.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return out, nil
}

// WriteKubeconfig atomically writes, with mode 0600, a kubeconfig whose one
// context "skiff" (namespace default) reaches server as user with a bearer
// token, trusting the CA in caPEM (stored base64 in
// certificate-authority-data). kubectl and client-go read it as is.
func WriteKubeconfig(path, server string, caPEM []byte, user, token string) error {
	if user == "" {
		return fmt.Errorf("pki: kubeconfig %s: empty user name", path)
	}
	data, err := renderKubeconfig(server, caPEM, user, token)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := writeFileAtomic(path, data, secretMode); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}

// LoadKubeconfig reads a kubeconfig and resolves its current context: the
// server and CA of its cluster, the token of its user and its namespace.
// Relative certificate-authority and tokenFile paths are relative to the
// kubeconfig's directory, as in kubectl. Client certificates and exec
// plugins are not supported; such a user comes back with an empty Token.
func LoadKubeconfig(path string) (*Kubeconfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: read kubeconfig: %w", err)
	}
	k, err := parseKubeconfig(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("pki: kubeconfig %s: %w", path, err)
	}
	return k, nil
}

func parseKubeconfig(data []byte, base string) (*Kubeconfig, error) {
	var kc kubeconfigFile
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKubeconfig, err)
	}
	if kc.CurrentContext == "" {
		return nil, fmt.Errorf("%w: no current-context", ErrInvalidKubeconfig)
	}
	var ctx *contextEntry
	for i := range kc.Contexts {
		if kc.Contexts[i].Name == kc.CurrentContext {
			ctx = &kc.Contexts[i].Context
			break
		}
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: context %q is not defined", ErrInvalidKubeconfig, kc.CurrentContext)
	}
	var cluster *clusterEntry
	for i := range kc.Clusters {
		if kc.Clusters[i].Name == ctx.Cluster {
			cluster = &kc.Clusters[i].Cluster
			break
		}
	}
	if cluster == nil {
		return nil, fmt.Errorf("%w: cluster %q is not defined", ErrInvalidKubeconfig, ctx.Cluster)
	}
	if cluster.Server == "" {
		return nil, fmt.Errorf("%w: cluster %q has no server", ErrInvalidKubeconfig, ctx.Cluster)
	}
	out := &Kubeconfig{
		Context:               kc.CurrentContext,
		Server:                cluster.Server,
		CAPEM:                 cluster.CertificateAuthorityData,
		InsecureSkipTLSVerify: cluster.InsecureSkipTLSVerify,
		Namespace:             ctx.Namespace,
	}
	if out.Namespace == "" {
		out.Namespace = defaultNamespace
	}
	if len(out.CAPEM) == 0 && cluster.CertificateAuthority != "" {
		b, err := os.ReadFile(resolve(base, cluster.CertificateAuthority))
		if err != nil {
			return nil, fmt.Errorf("%w: certificate-authority: %v", ErrInvalidKubeconfig, err)
		}
		out.CAPEM = b
	}
	if ctx.User != "" {
		var user *userEntry
		for i := range kc.Users {
			if kc.Users[i].Name == ctx.User {
				user = &kc.Users[i].User
				break
			}
		}
		if user == nil {
			return nil, fmt.Errorf("%w: user %q is not defined", ErrInvalidKubeconfig, ctx.User)
		}
		out.Token = user.Token
		if out.Token == "" && user.TokenFile != "" {
			b, err := os.ReadFile(resolve(base, user.TokenFile))
			if err != nil {
				return nil, fmt.Errorf("%w: tokenFile: %v", ErrInvalidKubeconfig, err)
			}
			out.Token = strings.TrimSpace(string(b))
		}
	}
	return out, nil
}

// resolve makes a kubeconfig-relative path absolute.
func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}
