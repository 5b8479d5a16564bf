package netagent

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// authPuller records the credential of each pull and accepts only good.
type authPuller struct {
	good  string // user:password that pulls
	tried []string
}

func (p *authPuller) ImagePresent(context.Context, string) (bool, error) { return false, nil }

func (p *authPuller) PullImage(_ context.Context, image string, auth *runtime.AuthConfig, _ func(runtime.PullProgress)) (runtime.ImageInfo, error) {
	who := "anonymous"
	if auth != nil {
		who = auth.Username + ":" + auth.Password
	}
	p.tried = append(p.tried, who)
	if who != p.good {
		return runtime.ImageInfo{}, errors.New("401 Unauthorized as " + strings.SplitN(who, ":", 2)[0])
	}
	return runtime.ImageInfo{Name: image}, nil
}

func dockerSecret(name, registry, user, pass string) *api.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	return &api.Secret{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"}, Type: api.SecretTypeDockerConfigJSON,
		Data: map[string][]byte{api.DockerConfigJSONKey: []byte(`{"auths":{"` + registry + `":{"auth":"` + auth + `"}}}`)}}
}

// TestPullWithSecrets: the pod's secrets are tried in order until one
// pulls; no matching secret is an anonymous pull; a missing secret is left
// out with the kubelet's event; the errors of every credential are the
// pull's error, with no password in it.
func TestPullWithSecrets(t *testing.T) {
	objs := fakeObjects{secs: map[string]*api.Secret{
		"wrong": dockerSecret("wrong", "https://127.0.0.1:5000", "alice", "bad-pw"),
		"right": dockerSecret("right", "127.0.0.1:5000", "alice", "good-pw"),
		"other": dockerSecret("other", "reg.example.com", "bob", "other-pw"),
		"bad":   {ObjectMeta: api.ObjectMeta{Name: "bad"}, Type: api.SecretTypeDockerConfigJSON, Data: map[string][]byte{api.DockerConfigJSONKey: []byte(`{"auths":{"x":{"auth":"!"}}}`)}},
	}}
	for _, tc := range []struct {
		name     string
		secrets  []string
		image    string
		good     string
		tried    []string
		wantErr  string
		wantEvnt string
	}{
		{name: "second of two", secrets: []string{"wrong", "right"}, image: "127.0.0.1:5000/app:v1", good: "alice:good-pw",
			tried: []string{"alice:bad-pw", "alice:good-pw"}},
		{name: "all wrong", secrets: []string{"wrong"}, image: "127.0.0.1:5000/app:v1", good: "anonymous",
			tried: []string{"alice:bad-pw"}, wantErr: "401 Unauthorized as alice"},
		{name: "no match is anonymous", secrets: []string{"other"}, image: "127.0.0.1:5000/app", good: "anonymous",
			tried: []string{"anonymous"}},
		{name: "missing secret", secrets: []string{"absent", "", "right"}, image: "127.0.0.1:5000/app:v1", good: "alice:good-pw",
			tried:    []string{"alice:good-pw"},
			wantEvnt: "Warning FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed."},
		{name: "two errors", secrets: []string{"wrong", "right"}, image: "127.0.0.1:5000/app:v1", good: "nobody",
			tried: []string{"alice:bad-pw", "alice:good-pw"}, wantErr: "[401 Unauthorized as alice, 401 Unauthorized as alice]"},
		{name: "bad secret", secrets: []string{"bad"}, image: "127.0.0.1:5000/app:v1", wantErr: `secret "bad": .dockerconfigjson: unable to parse auth field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fakeRecorder{}
			w := &podWorker{m: &podManager{objects: objs, rec: rec}, log: testLogger(t)}
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "default"}}
			for _, s := range tc.secrets {
				pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, api.LocalObjectReference{Name: s})
			}
			p := &authPuller{good: tc.good}
			_, err := w.pullWithSecrets(context.Background(), p, pod, tc.image, nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "-pw") {
				t.Fatalf("a password in the error: %v", err)
			}
			if !slices.Equal(p.tried, tc.tried) {
				t.Fatalf("tried %v, want %v", p.tried, tc.tried)
			}
			if tc.wantEvnt != "" && !rec.has(tc.wantEvnt) {
				t.Fatalf("events %v, want %q", rec.events, tc.wantEvnt)
			}
		})
	}
	if got := repository("busybox:1.36"); got != "docker.io/library/busybox" {
		t.Fatalf("repository(busybox:1.36) = %s", got)
	}
	if got := repository("127.0.0.1:5000/team/app@sha256:" + strings.Repeat("a", 64)); got != "127.0.0.1:5000/team/app" {
		t.Fatalf("repository of a digest ref = %s", got)
	}
}
