package field

import (
	"errors"
	"testing"
)

func TestPathString(t *testing.T) {
	tests := []struct {
		name string
		path *Path
		want string
	}{
		{"root", NewPath("spec"), "spec"},
		{"children", NewPath("spec", "ports"), "spec.ports"},
		{"index", NewPath("spec", "ports").Index(0).Child("port"), "spec.ports[0].port"},
		{"key", NewPath("metadata", "labels").Key("app"), "metadata.labels[app]"},
		{"nested index", NewPath("spec").Child("containers").Index(2).Child("ports").Index(1), "spec.containers[2].ports[1]"},
		{"nil", nil, "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.path.String(); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	p := NewPath("spec", "ports").Index(0).Child("port")
	tests := []struct {
		name     string
		err      *Error
		want     string
		wantBody string
	}{
		{"invalid int", Invalid(p, 0, "must be between 1 and 65535, inclusive"),
			"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			"Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"invalid string quoted", Invalid(NewPath("metadata", "name"), "Foo", "bad"),
			`metadata.name: Invalid value: "Foo": bad`, `Invalid value: "Foo": bad`},
		{"required has no value", Required(NewPath("spec", "selector"), ""),
			"spec.selector: Required value", "Required value"},
		{"duplicate", Duplicate(NewPath("spec", "ports").Index(1).Child("name"), "http"),
			`spec.ports[1].name: Duplicate value: "http"`, `Duplicate value: "http"`},
		{"not supported", NotSupported(NewPath("spec", "type"), "Foo", []string{"ClusterIP", "NodePort"}),
			`spec.type: Unsupported value: "Foo": supported values: "ClusterIP", "NodePort"`,
			`Unsupported value: "Foo": supported values: "ClusterIP", "NodePort"`},
		{"forbidden hides value", Forbidden(NewPath("spec", "x"), "may not be set"),
			"spec.x: Forbidden: may not be set", "Forbidden: may not be set"},
		{"too long", TooLong(NewPath("metadata", "name"), "x", 63),
			"metadata.name: Too long: must have at most 63 bytes", "Too long: must have at most 63 bytes"},
		{"list value as JSON", Invalid(NewPath("spec", "clusterIPs"), []string{"10.0.0.1"}, "bad"),
			`spec.clusterIPs: Invalid value: ["10.0.0.1"]: bad`, `Invalid value: ["10.0.0.1"]: bad`},
		{"internal", Internal(NewPath("spec"), errors.New("boom")), "spec: Internal error: boom", "Internal error: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := tt.err.ErrorBody(); got != tt.wantBody {
				t.Errorf("ErrorBody() = %q, want %q", got, tt.wantBody)
			}
		})
	}
}

func TestErrorListText(t *testing.T) {
	one := ErrorList{Required(NewPath("a"), "")}
	if got := one.Error(); got != "a: Required value" {
		t.Fatalf("one: %q", got)
	}
	two := ErrorList{Required(NewPath("a"), ""), Invalid(NewPath("b"), 1, "x")}
	if got := two.Error(); got != "[a: Required value, b: Invalid value: 1: x]" {
		t.Fatalf("two: %q", got)
	}
}
