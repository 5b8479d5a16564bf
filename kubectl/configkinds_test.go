package kubectl_test

import (
	"strings"
	"testing"
)

// TestConfigKindsApplyGetDescribe: skiff apply of a Secret written with
// stringData and of a ConfigMap, their tables, and describe secret, which
// shows sizes and never a value.
func TestConfigKindsApplyGetDescribe(t *testing.T) {
	h := newHarness(t)
	file := h.writeFile("app.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: app
stringData:
  DB_PASSWORD: hunter2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-conf
data:
  a: "1"
  b: "2"
`)
	if out := h.ok("apply", "-f", file); out != "secret/app created\nconfigmap/app-conf created\n" {
		t.Fatalf("apply: %q", out)
	}
	out := h.ok("get", "secret,cm")
	for _, want := range []string{"secret/app Opaque 1", "configmap/app-conf 2"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("get lacks %q:\n%s", want, out)
		}
	}
	if got := h.ok("get", "secret", "app", "-o", "jsonpath={.data.DB_PASSWORD}"); got != "aHVudGVyMg==" {
		t.Errorf("data.DB_PASSWORD = %q", got)
	}
	out = h.ok("describe", "secret", "app")
	for _, want := range []string{"Type:", "Opaque", "Data\n====\n", "DB_PASSWORD:", "7 bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe secret lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "aHVudGVyMg") {
		t.Errorf("describe secret shows the value:\n%s", out)
	}
}
