package api

import (
	"testing"

	"github.com/skiff-dev/skiff/api/field"
)

func TestNameErrorWording(t *testing.T) {
	// The exact messages users know from Kubernetes.
	tests := []struct {
		name string
		errs field.ErrorList
		want string
	}{
		{
			name: "subdomain",
			errs: invalidEach(field.NewPath("metadata", "name"), "Foo", ValidateDNS1123Subdomain("Foo")),
			want: `metadata.name: Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		},
		{
			name: "label",
			errs: invalidEach(field.NewPath("metadata", "name"), "Web", ValidateDNS1123Label("Web")),
			want: `metadata.name: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
		{
			name: "dns-1035",
			errs: invalidEach(field.NewPath("metadata", "name"), "1web", ValidateDNS1035Label("1web")),
			want: `metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
		},
		{
			name: "port range",
			errs: invalidEach(field.NewPath("spec", "ports").Index(0).Child("port"), 0, ValidatePortNum(0)),
			want: `spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.errs) != 1 {
				t.Fatalf("got %d errors: %v", len(tt.errs), tt.errs)
			}
			if got := tt.errs[0].Error(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestStringValidators(t *testing.T) {
	type fn func(string) []string
	tests := []struct {
		name  string
		f     fn
		valid []string
		bad   []string
	}{
		{"DNS1123Label", ValidateDNS1123Label,
			[]string{"a", "web", "web-1", "1abc", repeat("a", 63)},
			[]string{"", "Web", "-web", "web-", "web.x", "web_1", repeat("a", 64)}},
		{"DNS1123Subdomain", ValidateDNS1123Subdomain,
			[]string{"a", "example.com", "web-0.db", repeat("a", 63) + "." + repeat("b", 63)},
			[]string{"", "Example.com", ".a", "a.", "a..b", "a_b", repeat("a.", 127) + "a"}},
		{"DNS1035Label", ValidateDNS1035Label,
			[]string{"web", "a-1", "x"},
			[]string{"", "1web", "web-", "Web", "web.x", repeat("a", 64)}},
		{"QualifiedName", ValidateQualifiedName,
			[]string{"app", "App_Name", "my.name", "kubernetes.io/service-name", "a/b", "123-abc"},
			[]string{"", "/a", "a/", "-a", "a-", "a/b/c", "Bad.Prefix/a", repeat("a", 64), "a b"}},
		{"LabelValue", ValidateLabelValue,
			[]string{"", "web", "v1.2_3-x", repeat("a", 63)},
			[]string{"-web", "web-", "a b", "a/b", repeat("a", 64)}},
		{"PortName", ValidatePortName,
			[]string{"http", "h2c", "metrics-1", repeat("a", 15)},
			[]string{"", "HTTP", "80", "-http", "http-", "ht--tp", "h_t", repeat("a", 16)}},
		{"Percent", ValidatePercent,
			[]string{"0%", "25%", "100%"},
			[]string{"", "%", "25", "2.5%", "-5%"}},
		{"EnvVarName", ValidateEnvVarName,
			[]string{"PATH", "my.var", "1VAR", "a-b", "weird$name"},
			[]string{"", "A=B", "tab\tname", "ünï"}},
		{"IPAddressName", func(s string) []string { return ValidateIPAddressName(s, false) },
			[]string{"10.96.0.1", "2001:db8::1"},
			[]string{"", "10.96.0.01", "2001:DB8::1", "2001:db8:0::1", "10.96.0.1/32", "web"}},
		{"PathSegmentName", ValidatePathSegmentName,
			[]string{"web", "Web.123", "a:b"},
			[]string{".", "..", "a/b", "a%b"}},
		{"ConfigMapKey", ValidateConfigMapKey,
			[]string{"key", "KEY_NAME", "a.b-c"},
			[]string{"", ".", "..", "..a", "a/b", "a b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.valid {
				if errs := tt.f(s); len(errs) != 0 {
					t.Errorf("%q: unexpected errors %q", s, errs)
				}
			}
			for _, s := range tt.bad {
				if errs := tt.f(s); len(errs) == 0 {
					t.Errorf("%q: accepted", s)
				}
			}
		})
	}
}

func TestIPValidators(t *testing.T) {
	tests := []struct {
		s          string
		ip, v6     bool
		cidr       bool
		nonSpecial bool
	}{
		{s: "10.0.0.1", ip: true, nonSpecial: true},
		{s: "2001:db8::1", ip: true, v6: true, nonSpecial: true},
		{s: "::ffff:10.0.0.1"},
		{s: "fe80::1%eth0"},
		{s: "10.0.0.0/8", cidr: true},
		{s: "2001:db8::/64", cidr: true},
		{s: "10.0.0.1/33"},
		{s: "127.0.0.1", ip: true},
		{s: "0.0.0.0", ip: true},
		{s: "169.254.1.1", ip: true},
		{s: "224.0.0.5", ip: true},
		{s: "fe80::1", ip: true, v6: true},
		{s: "web"},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := IsValidIP(tt.s); got != tt.ip {
				t.Errorf("IsValidIP = %v", got)
			}
			if got := IsIPv6(tt.s); got != tt.v6 {
				t.Errorf("IsIPv6 = %v", got)
			}
			if got := IsValidCIDR(tt.s); got != tt.cidr {
				t.Errorf("IsValidCIDR = %v", got)
			}
			if tt.ip {
				if got := len(ValidateNonSpecialIP(tt.s, field.NewPath("x"))) == 0; got != tt.nonSpecial {
					t.Errorf("ValidateNonSpecialIP ok = %v", got)
				}
			}
		})
	}
}
