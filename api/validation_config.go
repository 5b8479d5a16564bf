package api

import (
	"encoding/json"

	"github.com/skiff-dev/skiff/api/field"
)

// Validation of ConfigMaps, Secrets and ServiceAccounts, as Kubernetes'
// pkg/apis/core/validation does it (ValidateConfigMap, ValidateSecret,
// ValidateServiceAccount and their updates):
//
//   - Keys of data and binaryData (ConfigMap) and of data (Secret) are
//     config map keys (ValidateConfigMapKey: at most 253 characters of
//     [-._a-zA-Z0-9], not "." or "..", not starting with ".."), reported
//     at data[key] or binaryData[key]. A ConfigMap key may not be in both
//     maps.
//   - The values together are at most MaxConfigDataSize bytes: "Too long"
//     at the Secret's data, at the whole ConfigMap ("[]", Kubernetes'
//     rendering of the root path) for a ConfigMap.
//   - A Secret's type decides its required keys: service-account-token
//     needs the annotation kubernetes.io/service-account.name; dockercfg
//     and dockerconfigjson need .dockercfg or .dockerconfigjson holding a
//     JSON object; basic-auth needs username or password; ssh-auth a
//     non-empty ssh-privatekey; tls both tls.crt and tls.key. Other types
//     (Opaque, any custom one) need nothing. Secret contents never appear
//     in an error: a bad value is shown as "<secret contents redacted>".
//   - A Secret's type is immutable. Once immutable is true, it cannot be
//     unset and data (and a ConfigMap's binaryData) cannot change: 422
//     "field is immutable when `immutable` is set".
//   - A ServiceAccount is checked for its metadata only.
//
// stringData is merged into data before validation (DefaultSecret), so it
// is validated as data, with data's paths.

const (
	// immutableSetErrMsg is Kubernetes' message for a change of an
	// immutable ConfigMap or Secret.
	immutableSetErrMsg = "field is immutable when `immutable` is set"
	redactedValue      = "<secret contents redacted>"
)

// tooLongRoot is the size error of a whole ConfigMap: Kubernetes reports
// it at the empty root path, which it renders "[]".
func tooLongRoot(max int) *field.Error {
	e := field.TooLong(field.NewPath(""), "", max)
	e.Field = "[]"
	return e
}

// ---- ConfigMap ----

// ValidateConfigMap checks a new ConfigMap.
func ValidateConfigMap(c *ConfigMap) field.ErrorList {
	errs := ValidateObjectMeta(&c.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	total := 0
	dataPath, binPath := field.NewPath("data"), field.NewPath("binaryData")
	for _, k := range sortedKeys(c.Data) {
		errs = append(errs, invalidEach(dataPath.Key(k), k, ValidateConfigMapKey(k))...)
		if _, dup := c.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, "duplicate of key present in binaryData"))
		}
		total += len(c.Data[k])
	}
	for _, k := range sortedKeys(c.BinaryData) {
		errs = append(errs, invalidEach(binPath.Key(k), k, ValidateConfigMapKey(k))...)
		total += len(c.BinaryData[k])
	}
	if total > MaxConfigDataSize {
		errs = append(errs, tooLongRoot(MaxConfigDataSize))
	}
	return errs
}

// ValidateConfigMapUpdate checks an update of a ConfigMap: the immutable
// rules, then the ConfigMap as new.
func ValidateConfigMapUpdate(c, old *ConfigMap) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if isTrue(old.Immutable) {
		if !isTrue(c.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableSetErrMsg))
		}
		if !semanticEqual(c.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableSetErrMsg))
		}
		if !semanticEqual(c.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableSetErrMsg))
		}
	}
	return append(errs, ValidateConfigMap(c)...)
}

func isTrue(b *bool) bool { return b != nil && *b }

// ---- Secret ----

// ValidateSecret checks a new Secret (stringData already merged into
// data by DefaultSecret).
func ValidateSecret(s *Secret) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	dataPath := field.NewPath("data")
	total := 0
	for _, k := range sortedKeys(s.Data) {
		errs = append(errs, invalidEach(dataPath.Key(k), k, ValidateConfigMapKey(k))...)
		total += len(s.Data[k])
	}
	if total > MaxConfigDataSize {
		errs = append(errs, field.TooLong(dataPath, "", MaxConfigDataSize))
	}
	// The keys a type requires: present (even empty) unless said otherwise.
	require := func(keys ...string) {
		for _, k := range keys {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(dataPath.Key(k), ""))
			}
		}
	}
	jsonObject := func(k string) {
		if _, ok := s.Data[k]; !ok {
			require(k)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(s.Data[k], &m); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(k), redactedValue, err.Error()))
		}
	}
	switch s.Type {
	case SecretTypeServiceAccountToken:
		if s.Annotations[ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(ServiceAccountNameKey), ""))
		}
	case SecretTypeDockercfg:
		jsonObject(DockerConfigKey)
	case SecretTypeDockerConfigJSON:
		jsonObject(DockerConfigJSONKey)
	case SecretTypeBasicAuth:
		_, user := s.Data[BasicAuthUsernameKey]
		_, pass := s.Data[BasicAuthPasswordKey]
		if !user && !pass {
			require(BasicAuthUsernameKey, BasicAuthPasswordKey)
		}
	case SecretTypeSSHAuth:
		if len(s.Data[SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(SSHAuthPrivateKey), ""))
		}
	case SecretTypeTLS:
		require(TLSCertKey, TLSPrivateKeyKey)
	}
	return errs
}

// ValidateSecretUpdate checks an update of a Secret: type immutable, the
// immutable rules, then the Secret as new.
func ValidateSecretUpdate(s, old *Secret) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))...)
	if isTrue(old.Immutable) {
		if !isTrue(s.Immutable) {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableSetErrMsg))
		}
		if !semanticEqual(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableSetErrMsg))
		}
	}
	return append(errs, ValidateSecret(s)...)
}

// ---- ServiceAccount ----

// ValidateServiceAccount checks a new ServiceAccount: its metadata, with a
// DNS-1123 subdomain name.
func ValidateServiceAccount(sa *ServiceAccount) field.ErrorList {
	return ValidateObjectMeta(&sa.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
}

// ValidateServiceAccountUpdate checks an update of a ServiceAccount.
func ValidateServiceAccountUpdate(sa, old *ServiceAccount) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, ValidateServiceAccount(sa)...)
}
