package api

import (
	"strings"
	"testing"
)

func validConfigMap() *ConfigMap {
	return &ConfigMap{
		ObjectMeta: ObjectMeta{Name: "web-conf", Namespace: "default"},
		Data:       map[string]string{"app.properties": "a=b", "LOG_LEVEL": "debug"},
		BinaryData: map[string][]byte{"logo.png": {0x89, 'P', 'N', 'G'}},
	}
}

func validSecret() *Secret {
	return &Secret{
		ObjectMeta: ObjectMeta{Name: "db", Namespace: "default"},
		Type:       SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte("hunter2")},
	}
}

func validServiceAccount() *ServiceAccount {
	return &ServiceAccount{
		ObjectMeta:       ObjectMeta{Name: "builder", Namespace: "default"},
		Secrets:          []ObjectReference{{Name: "builder-token"}},
		ImagePullSecrets: []LocalObjectReference{{Name: "registry"}},
	}
}

func TestValidateConfigMap(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ConfigMap)
		want   []string
	}{
		{name: "valid", mutate: func(*ConfigMap) {}},
		{name: "empty", mutate: func(c *ConfigMap) { c.Data, c.BinaryData = nil, nil }},
		{name: "key with a slash", mutate: func(c *ConfigMap) { c.Data["a/b"] = "x" },
			want: []string{"FieldValueInvalid data[a/b]"}},
		{name: "key with a space in binaryData", mutate: func(c *ConfigMap) { c.BinaryData["a b"] = nil },
			want: []string{"FieldValueInvalid binaryData[a b]"}},
		{name: "key dot", mutate: func(c *ConfigMap) { c.Data["."] = "x" },
			want: []string{"FieldValueInvalid data[.]"}},
		{name: "key dot dot", mutate: func(c *ConfigMap) { c.Data[".."] = "x" },
			want: []string{"FieldValueInvalid data[..]"}},
		{name: "key starting with dot dot", mutate: func(c *ConfigMap) { c.Data["..data"] = "x" },
			want: []string{"FieldValueInvalid data[..data]"}},
		{name: "key starting with one dot is fine", mutate: func(c *ConfigMap) { c.Data[".env"] = "x" }},
		{name: "key of 253 characters is fine", mutate: func(c *ConfigMap) { c.Data[repeat("k", 253)] = "x" }},
		{name: "key of 254 characters", mutate: func(c *ConfigMap) { c.Data[repeat("k", 254)] = "x" },
			want: []string{"FieldValueInvalid data[" + repeat("k", 254) + "]"}},
		{name: "key in data and binaryData", mutate: func(c *ConfigMap) { c.Data["logo.png"] = "x" },
			want: []string{"FieldValueInvalid data[logo.png]"}},
		{name: "exactly 1 MiB", mutate: func(c *ConfigMap) {
			c.Data = map[string]string{"a": repeat("x", MaxConfigDataSize-3)}
			c.BinaryData = map[string][]byte{"b": []byte("xyz")}
		}},
		{name: "over 1 MiB across data and binaryData", mutate: func(c *ConfigMap) {
			c.Data = map[string]string{"a": repeat("x", MaxConfigDataSize-3)}
			c.BinaryData = map[string][]byte{"b": []byte("wxyz")}
		}, want: []string{"FieldValueTooLong []"}},
		{name: "bad name", mutate: func(c *ConfigMap) { c.Name = "Web_Conf" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "no namespace", mutate: func(c *ConfigMap) { c.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfigMap()
			tt.mutate(c)
			checkErrs(t, ValidateConfigMap(c), tt.want...)
		})
	}
	t.Run("messages", func(t *testing.T) {
		c := validConfigMap()
		c.Data = map[string]string{"..x": "1", "big": repeat("x", MaxConfigDataSize+1)}
		got := ValidateConfigMap(c).Error()
		for _, want := range []string{
			`data[..x]: Invalid value: "..x": must not start with '..'`,
			`[]: Too long: must have at most 1048576 bytes`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%q lacks %q", got, want)
			}
		}
		c = validConfigMap()
		c.Data["logo.png"] = ""
		if got := ValidateConfigMap(c).Error(); got != `data[logo.png]: Invalid value: "logo.png": duplicate of key present in binaryData` {
			t.Errorf("duplicate: %q", got)
		}
	})
}

func TestValidateConfigMapUpdate(t *testing.T) {
	immutable := func() *ConfigMap {
		c := validConfigMap()
		c.Immutable = ptrTo(true)
		return c
	}
	tests := []struct {
		name     string
		old      func() *ConfigMap
		mutate   func(*ConfigMap)
		want     []string
		wantText string
	}{
		{name: "mutable: data may change", old: validConfigMap, mutate: func(c *ConfigMap) { c.Data["new"] = "1" }},
		{name: "mutable: may become immutable", old: validConfigMap, mutate: func(c *ConfigMap) { c.Immutable = ptrTo(true) }},
		{name: "mutable: immutable false to true and data", old: validConfigMap, mutate: func(c *ConfigMap) {
			c.Immutable = ptrTo(false)
			c.Data = nil
		}},
		{name: "immutable: labels may change", old: immutable, mutate: func(c *ConfigMap) { c.Labels = map[string]string{"a": "b"} }},
		{name: "immutable: data", old: immutable, mutate: func(c *ConfigMap) { c.Data["LOG_LEVEL"] = "info" },
			want: []string{"FieldValueForbidden data"}, wantText: "data: Forbidden: field is immutable when `immutable` is set"},
		{name: "immutable: binaryData", old: immutable, mutate: func(c *ConfigMap) { delete(c.BinaryData, "logo.png") },
			want: []string{"FieldValueForbidden binaryData"}},
		{name: "immutable: unset", old: immutable, mutate: func(c *ConfigMap) { c.Immutable = nil },
			want: []string{"FieldValueForbidden immutable"}, wantText: "immutable: Forbidden: field is immutable when `immutable` is set"},
		{name: "immutable: set to false", old: immutable, mutate: func(c *ConfigMap) { c.Immutable = ptrTo(false) },
			want: []string{"FieldValueForbidden immutable"}},
		{name: "the new object is validated too", old: validConfigMap, mutate: func(c *ConfigMap) { c.Data["a b"] = "" },
			want: []string{"FieldValueInvalid data[a b]"}},
		{name: "name is immutable", old: validConfigMap, mutate: func(c *ConfigMap) { c.Name = "other" },
			want: []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old()
			c := tt.old()
			tt.mutate(c)
			errs := ValidateConfigMapUpdate(c, old)
			checkErrs(t, errs, tt.want...)
			if tt.wantText != "" && errs.Error() != tt.wantText {
				t.Errorf("message %q, want %q", errs.Error(), tt.wantText)
			}
		})
	}
}

func TestValidateSecret(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*Secret)
		want     []string
		wantText string
	}{
		{name: "opaque", mutate: func(*Secret) {}},
		{name: "no type (validated before defaulting)", mutate: func(s *Secret) { s.Type = "" }},
		{name: "custom type needs nothing", mutate: func(s *Secret) { s.Type, s.Data = "example.com/custom", nil }},
		{name: "bad key", mutate: func(s *Secret) { s.Data["a:b"] = nil },
			want: []string{"FieldValueInvalid data[a:b]"}},
		{name: "key starting with dot dot", mutate: func(s *Secret) { s.Data["..x"] = nil },
			want: []string{"FieldValueInvalid data[..x]"}},
		{name: "exactly 1 MiB", mutate: func(s *Secret) {
			s.Data = map[string][]byte{"a": make([]byte, MaxConfigDataSize-1), "b": {1}}
		}},
		{name: "over 1 MiB", mutate: func(s *Secret) {
			s.Data = map[string][]byte{"a": make([]byte, MaxConfigDataSize), "b": {1}}
		}, want: []string{"FieldValueTooLong data"}, wantText: "data: Too long: must have at most 1048576 bytes"},

		{name: "service account token with its annotation", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeServiceAccountToken, nil
			s.Annotations = map[string]string{ServiceAccountNameKey: "builder"}
		}},
		{name: "service account token without annotation", mutate: func(s *Secret) { s.Type = SecretTypeServiceAccountToken },
			want:     []string{"FieldValueRequired metadata.annotations[kubernetes.io/service-account.name]"},
			wantText: "metadata.annotations[kubernetes.io/service-account.name]: Required value"},
		{name: "service account token with empty annotation", mutate: func(s *Secret) {
			s.Type = SecretTypeServiceAccountToken
			s.Annotations = map[string]string{ServiceAccountNameKey: ""}
		}, want: []string{"FieldValueRequired metadata.annotations[kubernetes.io/service-account.name]"}},

		{name: "dockercfg", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte(`{"registry.example":{"auth":"eDp5"}}`)}
		}},
		{name: "dockercfg without its key", mutate: func(s *Secret) { s.Type = SecretTypeDockercfg },
			want: []string{"FieldValueRequired data[.dockercfg]"}},
		{name: "dockercfg not JSON", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte(`hunter2`)}
		}, want: []string{"FieldValueInvalid data[.dockercfg]"},
			wantText: `data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid character 'h' looking for beginning of value`},
		{name: "dockerconfigjson", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeDockerConfigJSON, map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}
		}},
		{name: "dockerconfigjson without its key", mutate: func(s *Secret) { s.Type = SecretTypeDockerConfigJSON },
			want: []string{"FieldValueRequired data[.dockerconfigjson]"}},
		{name: "dockerconfigjson a JSON array", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeDockerConfigJSON, map[string][]byte{".dockerconfigjson": []byte(`[1]`)}
		}, want: []string{"FieldValueInvalid data[.dockerconfigjson]"}},

		{name: "basic auth with username only", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeBasicAuth, map[string][]byte{"username": []byte("admin")}
		}},
		{name: "basic auth with an empty password only", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeBasicAuth, map[string][]byte{"password": {}}
		}},
		{name: "basic auth without either", mutate: func(s *Secret) { s.Type, s.Data = SecretTypeBasicAuth, nil },
			want: []string{"FieldValueRequired data[username]", "FieldValueRequired data[password]"}},

		{name: "ssh auth", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": []byte("key")}
		}},
		{name: "ssh auth with an empty key", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": {}}
		}, want: []string{"FieldValueRequired data[ssh-privatekey]"}},

		{name: "tls", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeTLS, map[string][]byte{"tls.crt": []byte("c"), "tls.key": {}}
		}},
		{name: "tls without the key", mutate: func(s *Secret) {
			s.Type, s.Data = SecretTypeTLS, map[string][]byte{"tls.crt": []byte("c")}
		}, want: []string{"FieldValueRequired data[tls.key]"}},
		{name: "tls with neither", mutate: func(s *Secret) { s.Type, s.Data = SecretTypeTLS, nil },
			want: []string{"FieldValueRequired data[tls.crt]", "FieldValueRequired data[tls.key]"}},
		{name: "bad name", mutate: func(s *Secret) { s.Name = "DB" },
			want: []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSecret()
			tt.mutate(s)
			errs := ValidateSecret(s)
			checkErrs(t, errs, tt.want...)
			if tt.wantText != "" && errs.Error() != tt.wantText {
				t.Errorf("message %q, want %q", errs.Error(), tt.wantText)
			}
			if strings.Contains(errs.Error(), "hunter2") {
				t.Errorf("an error shows the secret: %v", errs)
			}
		})
	}
}

func TestValidateSecretUpdate(t *testing.T) {
	immutable := func() *Secret {
		s := validSecret()
		s.Immutable = ptrTo(true)
		return s
	}
	tests := []struct {
		name     string
		old      func() *Secret
		mutate   func(*Secret)
		want     []string
		wantText string
	}{
		{name: "data may change", old: validSecret, mutate: func(s *Secret) { s.Data["password"] = []byte("x") }},
		{name: "type is immutable", old: validSecret, mutate: func(s *Secret) {
			s.Type = SecretTypeBasicAuth
		}, want: []string{"FieldValueInvalid type"}, wantText: `type: Invalid value: "kubernetes.io/basic-auth": field is immutable`},
		{name: "immutable: metadata may change", old: immutable, mutate: func(s *Secret) { s.Annotations = map[string]string{"a": "b"} }},
		{name: "immutable: data", old: immutable, mutate: func(s *Secret) { s.Data["password"] = []byte("x") },
			want: []string{"FieldValueForbidden data"}, wantText: "data: Forbidden: field is immutable when `immutable` is set"},
		{name: "immutable: unset", old: immutable, mutate: func(s *Secret) { s.Immutable = nil },
			want: []string{"FieldValueForbidden immutable"}},
		{name: "immutable: all at once", old: immutable, mutate: func(s *Secret) {
			s.Immutable, s.Data, s.Type = ptrTo(false), nil, "example.com/x"
		}, want: []string{"FieldValueInvalid type", "FieldValueForbidden immutable", "FieldValueForbidden data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old()
			s := tt.old()
			tt.mutate(s)
			errs := ValidateSecretUpdate(s, old)
			checkErrs(t, errs, tt.want...)
			if tt.wantText != "" && errs.Error() != tt.wantText {
				t.Errorf("message %q, want %q", errs.Error(), tt.wantText)
			}
			if strings.Contains(errs.Error(), "hunter2") {
				t.Errorf("an error shows the secret: %v", errs)
			}
		})
	}
}

func TestDefaultSecretMergesStringData(t *testing.T) {
	s := &Secret{
		Data:       map[string][]byte{"a": []byte("old"), "b": []byte("kept")},
		StringData: map[string]string{"a": "new", "c": "added"},
	}
	DefaultSecret(s)
	if s.Type != SecretTypeOpaque || s.StringData != nil {
		t.Fatalf("type %q stringData %v", s.Type, s.StringData)
	}
	want := map[string]string{"a": "new", "b": "kept", "c": "added"}
	if len(s.Data) != len(want) {
		t.Fatalf("data %q", s.Data)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	before := mustJSON(t, s)
	DefaultSecret(s)
	if after := mustJSON(t, s); after != before {
		t.Errorf("not idempotent: %s then %s", before, after)
	}

	only := &Secret{Type: SecretTypeTLS, StringData: map[string]string{"tls.crt": "c", "tls.key": "k"}}
	DefaultSecret(only)
	if only.Type != SecretTypeTLS || string(only.Data["tls.key"]) != "k" {
		t.Fatalf("stringData only: %+v", only)
	}
	if errs := ValidateSecret(&Secret{ObjectMeta: ObjectMeta{Name: "t", Namespace: "d"}, Type: only.Type, Data: only.Data}); len(errs) > 0 {
		t.Fatal(errs)
	}
	// JSON: data is base64, stringData gone.
	if got := mustJSON(t, only); got != `{"metadata":{"creationTimestamp":null},"data":{"tls.crt":"Yw==","tls.key":"aw=="},"type":"kubernetes.io/tls"}` {
		t.Errorf("JSON %s", got)
	}
}

func TestValidateServiceAccount(t *testing.T) {
	checkErrs(t, ValidateServiceAccount(validServiceAccount()))
	sa := validServiceAccount()
	sa.Name = "Builder"
	checkErrs(t, ValidateServiceAccount(sa), "FieldValueInvalid metadata.name")
	old, upd := validServiceAccount(), validServiceAccount()
	upd.Secrets, upd.AutomountServiceAccountToken = nil, ptrTo(false)
	checkErrs(t, ValidateServiceAccountUpdate(upd, old))
	upd.Namespace = "other"
	checkErrs(t, ValidateServiceAccountUpdate(upd, old), "FieldValueInvalid metadata.namespace")
}

func TestPodServiceAccountDefaultedOnCreateOnly(t *testing.T) {
	pods := Lookup(Resources(), "v1", "pods")
	p := validPod()
	pods.PrepareForCreate(p)
	pods.Default(p)
	if p.Spec.ServiceAccountName != "default" || p.Spec.DeprecatedServiceAccount != "default" {
		t.Fatalf("create: serviceAccountName %q serviceAccount %q", p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount)
	}
	named := validPod()
	named.Spec.DeprecatedServiceAccount = "builder"
	pods.PrepareForCreate(named)
	pods.Default(named)
	if named.Spec.ServiceAccountName != "builder" {
		t.Fatalf("deprecated alias: %q", named.Spec.ServiceAccountName)
	}
	// An update of a pod stored without one leaves it without one.
	stored, upd := validPod(), validPod()
	pods.PrepareForUpdate(upd, stored)
	pods.Default(upd)
	if upd.Spec.ServiceAccountName != "" {
		t.Fatalf("update: %q", upd.Spec.ServiceAccountName)
	}
	// Templates are not pods: a Deployment's template keeps its empty name.
	deploy := Lookup(Resources(), "apps/v1", "deployments")
	d := validDeployment()
	deploy.PrepareForCreate(d)
	deploy.Default(d)
	if d.Spec.Template.Spec.ServiceAccountName != "" {
		t.Fatalf("template: %q", d.Spec.Template.Spec.ServiceAccountName)
	}
}
