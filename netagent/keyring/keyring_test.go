package keyring

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func jsonSecret(name, auths string) *api.Secret {
	return &api.Secret{ObjectMeta: api.ObjectMeta{Name: name}, Type: api.SecretTypeDockerConfigJSON,
		Data: map[string][]byte{api.DockerConfigJSONKey: []byte(`{"auths":` + auths + `}`)}}
}

func users(cs []AuthConfig) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Username+":"+c.Password)
	}
	return out
}

func TestLookup(t *testing.T) {
	k, err := FromSecrets([]*api.Secret{
		jsonSecret("a", `{
			"https://127.0.0.1:5000": {"auth": "`+b64("alice:pw1")+`"},
			"reg.example.com": {"username": "bob", "password": "pw2"},
			"reg.example.com/team": {"username": "carol", "password": "pw3"},
			"*.glob.example": {"username": "dave", "password": "pw4"},
			"https://index.docker.io/v1/": {"username": "hub", "password": "pw5"},
			"http://v2.example/v2/": {"username": "eve", "password": "pw6", "auth": "`+b64("erin:pw7")+`"}
		}`),
		{ObjectMeta: api.ObjectMeta{Name: "b"}, Type: api.SecretTypeDockercfg,
			Data: map[string][]byte{api.DockerConfigKey: []byte(`{"127.0.0.1:5000": {"auth": "` + b64("frank:pw8") + `"}}`)}},
		{ObjectMeta: api.ObjectMeta{Name: "opaque"}, Type: api.SecretTypeOpaque,
			Data: map[string][]byte{api.DockerConfigJSONKey: []byte(`{"auths":{"127.0.0.1:5000":{"username":"x","password":"y"}}}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string][]string{
		// Several secrets for one key: in the order of the secrets.
		"127.0.0.1:5000/workload": {"alice:pw1", "frank:pw8"},
		"127.0.0.1:5001/workload": nil, // another port
		"127.0.0.1/workload":      nil,
		// The longer path first.
		"reg.example.com/team/app": {"carol:pw3", "bob:pw2"},
		"reg.example.com/other":    {"bob:pw2"},
		"sub.reg.example.com/app":  nil, // more host parts
		"a.glob.example/app":       {"dave:pw4"},
		"a.b.glob.example/app":     nil,
		"v2.example/app":           {"erin:pw7"}, // /v2/ is the host; auth wins
		// Docker Hub's key for Docker Hub images only.
		"docker.io/library/busybox": {"hub:pw5"},
		"library/busybox":           {"hub:pw5"},
		"quay.io/app":               nil,
	} {
		got, ok := k.Lookup(image)
		if ok != (want != nil) || !slices.Equal(users(got), want) {
			t.Errorf("Lookup(%s) = %v %v, want %v", image, users(got), ok, want)
		}
	}
}

func TestFromSecretsErrors(t *testing.T) {
	for name, s := range map[string]*api.Secret{
		"not base64": jsonSecret("s", `{"r.example":{"auth":"%%%"}}`),
		"no colon":   jsonSecret("s", `{"r.example":{"auth":"`+b64("nocolon")+`"}}`),
		"not JSON": {ObjectMeta: api.ObjectMeta{Name: "s"}, Type: api.SecretTypeDockercfg,
			Data: map[string][]byte{api.DockerConfigKey: []byte(`hunter2`)}},
	} {
		_, err := FromSecrets([]*api.Secret{s})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), `secret "s"`) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// No secrets, or none of a docker type: an empty keyring.
	k, err := FromSecrets([]*api.Secret{{Type: api.SecretTypeDockerConfigJSON}})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := k.Lookup("docker.io/library/busybox"); ok {
		t.Fatalf("empty keyring: %v", c)
	}
}

// TestNeverPrinted: the password shows in no %v, %+v, %#v or slog line.
func TestNeverPrinted(t *testing.T) {
	a := AuthConfig{Username: "alice", Password: "s3cr3t-pw"}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("pull", "auth", a, "list", []AuthConfig{a})
	slog.New(slog.NewJSONHandler(&b, nil)).Info("pull", "auth", a)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", a, a, a, a), fmt.Sprint([]AuthConfig{a}), b.String()} {
		if strings.Contains(s, "s3cr3t") || !strings.Contains(s, "alice") {
			t.Errorf("printed: %s", s)
		}
	}
}
