package client

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Config says where the server is and how to authenticate.
type Config struct {
	// Server is the base URL, https://host:port (a path prefix is kept).
	Server string
	// CAPEM holds the PEM certificates that verify the server; empty means
	// the system roots.
	CAPEM []byte
	// Token is the bearer token sent with every request.
	Token string
	// HTTPClient, when set, is used as is (its transport then owns TLS and
	// CAPEM is not used). It should have no Timeout, or watches end early.
	HTTPClient *http.Client
	// UserAgent is sent with every request; empty means "skiff".
	UserAgent string
	// Namespace is the default namespace of the kubeconfig context, for
	// callers such as the CLI; the Client does not use it.
	Namespace string
}

// kubeconfig is the subset of the kubeconfig file format Skiff reads.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthorityData string `json:"certificate-authority-data"`
			CertificateAuthority     string `json:"certificate-authority"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token     string `json:"token"`
			TokenFile string `json:"tokenFile"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster   string `json:"cluster"`
			User      string `json:"user"`
			Namespace string `json:"namespace"`
		} `json:"context"`
	} `json:"contexts"`
}

// FromKubeconfig reads a kubeconfig file and returns the Config of its
// current context: the cluster's server and CA (certificate-authority-data,
// or the certificate-authority file, relative to the kubeconfig's
// directory), the user's token (token or tokenFile) and the context's
// namespace.
func FromKubeconfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("client: kubeconfig: %w", err)
	}
	cfg, err := parseKubeconfig(data, filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("client: kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

func parseKubeconfig(data []byte, dir string) (Config, error) {
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return Config{}, err
	}
	if kc.CurrentContext == "" {
		return Config{}, errors.New("no current-context")
	}
	var cfg Config
	found := false
	var clusterName, userName string
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			found = true
			clusterName, userName, cfg.Namespace = c.Context.Cluster, c.Context.User, c.Context.Namespace
			break
		}
	}
	if !found {
		return Config{}, fmt.Errorf("context %q not found", kc.CurrentContext)
	}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cfg.Server = c.Cluster.Server
		switch {
		case c.Cluster.CertificateAuthorityData != "":
			pem, err := base64.StdEncoding.DecodeString(strings.TrimSpace(c.Cluster.CertificateAuthorityData))
			if err != nil {
				return Config{}, fmt.Errorf("cluster %q: certificate-authority-data: %w", clusterName, err)
			}
			cfg.CAPEM = pem
		case c.Cluster.CertificateAuthority != "":
			p := c.Cluster.CertificateAuthority
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			pem, err := os.ReadFile(p)
			if err != nil {
				return Config{}, fmt.Errorf("cluster %q: certificate-authority: %w", clusterName, err)
			}
			cfg.CAPEM = pem
		}
		break
	}
	if !found {
		return Config{}, fmt.Errorf("cluster %q of context %q not found", clusterName, kc.CurrentContext)
	}
	if cfg.Server == "" {
		return Config{}, fmt.Errorf("cluster %q has no server", clusterName)
	}
	if userName != "" {
		found = false
		for _, u := range kc.Users {
			if u.Name != userName {
				continue
			}
			found = true
			cfg.Token = u.User.Token
			if cfg.Token == "" && u.User.TokenFile != "" {
				p := u.User.TokenFile
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				tok, err := os.ReadFile(p)
				if err != nil {
					return Config{}, fmt.Errorf("user %q: tokenFile: %w", userName, err)
				}
				cfg.Token = strings.TrimSpace(string(tok))
			}
			break
		}
		if !found {
			return Config{}, fmt.Errorf("user %q of context %q not found", userName, kc.CurrentContext)
		}
	}
	return cfg, nil
}
