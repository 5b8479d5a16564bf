package netagent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// fakeObjects is an objectSource over fixed maps; a name in failing
// answers a transport error.
type fakeObjects struct {
	cms     map[string]*api.ConfigMap
	secs    map[string]*api.Secret
	failing string
}

func (f fakeObjects) configMap(_ context.Context, _, name string) (*api.ConfigMap, error) {
	if f.failing != "" && name == f.failing {
		return nil, errors.New("server unreachable")
	}
	if cm, ok := f.cms[name]; ok {
		return cm, nil
	}
	return nil, errObjectNotFound{"configmap", name}
}

func (f fakeObjects) secret(_ context.Context, _, name string) (*api.Secret, error) {
	if f.failing != "" && name == f.failing {
		return nil, errors.New("server unreachable")
	}
	if s, ok := f.secs[name]; ok {
		return s, nil
	}
	return nil, errObjectNotFound{"secret", name}
}

func TestContainerEnvConfigMapsAndSecrets(t *testing.T) {
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "shop"}}
	src := fakeObjects{
		cms: map[string]*api.ConfigMap{
			"cfg":  {Data: map[string]string{"MODE": "fast", "LEVEL": "3", "1bad": "x", "with space": "y"}, BinaryData: map[string][]byte{"BIN": []byte("b")}},
			"more": {Data: map[string]string{"MODE": "slow"}},
		},
		secs:    map[string]*api.Secret{"db": {Data: map[string][]byte{"password": []byte("s3cret"), "user": []byte("app")}}},
		failing: "down",
	}
	yes := true
	cmRef := func(name, key string, opt bool) api.EnvVar {
		return api.EnvVar{Name: "V", ValueFrom: &api.EnvVarSource{ConfigMapKeyRef: &api.ConfigMapKeySelector{
			LocalObjectReference: api.LocalObjectReference{Name: name}, Key: key, Optional: &opt}}}
	}
	secRef := func(name, key string, opt bool) api.EnvVar {
		return api.EnvVar{Name: "V", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{
			LocalObjectReference: api.LocalObjectReference{Name: name}, Key: key, Optional: &opt}}}
	}
	fromCM := func(prefix, name string, opt bool) api.EnvFromSource {
		return api.EnvFromSource{Prefix: prefix, ConfigMapRef: &api.ConfigMapEnvSource{LocalObjectReference: api.LocalObjectReference{Name: name}, Optional: &opt}}
	}
	fromSec := func(prefix, name string, opt bool) api.EnvFromSource {
		return api.EnvFromSource{Prefix: prefix, SecretRef: &api.SecretEnvSource{LocalObjectReference: api.LocalObjectReference{Name: name}, Optional: &opt}}
	}
	cases := []struct {
		name    string
		from    []api.EnvFromSource
		env     []api.EnvVar
		want    []string
		wantErr string
		warns   []string
	}{
		{name: "configMapKeyRef", env: []api.EnvVar{cmRef("cfg", "MODE", false)}, want: []string{"V=fast"}},
		{name: "secretKeyRef", env: []api.EnvVar{secRef("db", "password", false)}, want: []string{"V=s3cret"}},
		{name: "missing configmap", env: []api.EnvVar{cmRef("nope", "k", false)}, wantErr: `configmap "nope" not found`},
		{name: "missing secret", env: []api.EnvVar{secRef("nope", "k", false)}, wantErr: `secret "nope" not found`},
		{name: "missing configmap key", env: []api.EnvVar{cmRef("cfg", "k", false)}, wantErr: "couldn't find key k in ConfigMap shop/cfg"},
		{name: "missing secret key", env: []api.EnvVar{secRef("db", "k", false)}, wantErr: "couldn't find key k in Secret shop/db"},
		{name: "binaryData is not a key of configMapKeyRef", env: []api.EnvVar{cmRef("cfg", "BIN", false)}, wantErr: "couldn't find key BIN in ConfigMap shop/cfg"},
		{name: "optional missing object and key skipped",
			env:  []api.EnvVar{cmRef("nope", "k", true), secRef("db", "k", true), {Name: "D", Value: "d"}},
			want: []string{"D=d"}},
		{name: "optional does not hide a transport error", env: []api.EnvVar{cmRef("down", "k", true)}, wantErr: "server unreachable"},
		{name: "envFrom with env overriding and expanding",
			from:  []api.EnvFromSource{fromCM("", "cfg", false), fromSec("DB_", "db", false)},
			env:   []api.EnvVar{{Name: "LEVEL", Value: "9"}, {Name: "X", Value: "$(MODE)-$(DB_user)"}},
			want:  []string{"LEVEL=9", "MODE=fast", "DB_password=s3cret", "DB_user=app", "X=fast-app"},
			warns: []string{"InvalidEnvironmentVariableNames: Keys [1bad, with space] from the EnvFrom configMap shop/cfg were skipped since they are considered invalid environment variable names."}},
		{name: "a later envFrom wins", from: []api.EnvFromSource{fromCM("", "more", false), fromCM("", "cfg", false)},
			want: []string{"MODE=fast", "LEVEL=3"}, warns: []string{"InvalidEnvironmentVariableNames"}},
		{name: "prefix makes a digit key valid", from: []api.EnvFromSource{fromCM("P_", "cfg", false)},
			want: []string{"P_1bad=x", "P_LEVEL=3", "P_MODE=fast"}, warns: []string{"Keys [P_with space]"}},
		{name: "envFrom missing", from: []api.EnvFromSource{fromSec("", "nope", false)}, wantErr: `secret "nope" not found`},
		{name: "envFrom optional missing", from: []api.EnvFromSource{fromCM("", "nope", true), fromSec("", "nope", yes)}, want: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &api.Container{Name: "app", EnvFrom: tc.from, Env: tc.env}
			got, warns, err := containerEnv(context.Background(), pod, c, envContext{}, src)
			if tc.wantErr != "" {
				var ce errEnvConfig
				if !errors.As(err, &ce) || ce.Error() != tc.wantErr {
					t.Fatalf("err %v, want config error %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// envFrom keys come sorted within one source; compare as sets
			// where a source adds several.
			if !slices.Equal(sortedCopy(got), sortedCopy(tc.want)) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if len(warns) != len(tc.warns) {
				t.Fatalf("warnings %v, want %v", warns, tc.warns)
			}
			for i, w := range warns {
				if !strings.Contains(w.reason+": "+w.msg, tc.warns[i]) {
					t.Fatalf("warning %q, want it to hold %q", w.reason+": "+w.msg, tc.warns[i])
				}
				if strings.Contains(w.msg, "s3cret") {
					t.Fatalf("a warning holds a secret value: %q", w.msg)
				}
			}
		})
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
