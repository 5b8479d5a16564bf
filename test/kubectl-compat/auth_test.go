package kubectlcompat

import (
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jwtPayload decodes a JWT's claims without checking them.
func jwtPayload(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(tok), ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCreateTokenCanIWhoAmI: kubectl create token (plain, with
// --duration and --audience, bound to a pod), kubectl auth whoami and
// kubectl auth can-i with the admin token and with the ServiceAccount's.
func TestCreateTokenCanIWhoAmI(t *testing.T) {
	ns := namespace(t, "satoken")
	kubectl(t, "-n", ns, "create", "serviceaccount", "app")
	kubectl(t, "-n", ns, "create", "configmap", "cm", "--from-literal=k=v")
	kubectl(t, "-n", ns, "create", "secret", "generic", "s", "--from-literal=k=v")

	// client-go's typed CreateToken (protobuf), for kubectls without
	// `create token`.
	tr, err := env.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx(t), "app", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("client-go CreateToken: %v", err)
	}
	tok := tr.Status.Token
	if has(t, "create token", "--bound-object-kind") {
		createToken(t, ns)
	} else {
		t.Log("SKIPPED kubectl create token: this kubectl has no `create token` (kubectl 1.24+)")
	}
	if has(t, "auth whoami", "whoami") {
		whoami(t, ns, tok)
	} else {
		t.Log("SKIPPED kubectl auth whoami: this kubectl has no `auth whoami` (kubectl 1.26+)")
	}
	canIAndRequests(t, ns, tok)
}

// has reports whether kubectl's help of the command mentions want (an
// older kubectl answers a parent command's help).
func has(t *testing.T, command, want string) bool {
	out, _, _ := kubectlErr(t, append(strings.Fields(command), "--help")...)
	return strings.Contains(out, want) && !strings.Contains(out, "Available Commands")
}

func createToken(t *testing.T, ns string) {
	tok := strings.TrimSpace(kubectl(t, "-n", ns, "create", "token", "app"))
	c := jwtPayload(t, tok)
	if c["sub"] != "system:serviceaccount:"+ns+":app" || c["iss"] != "https://kubernetes.default.svc.cluster.local" {
		t.Fatalf("claims %v", c)
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 3600 {
		t.Fatalf("default lifetime %vs", exp-iat)
	}
	c = jwtPayload(t, kubectl(t, "-n", ns, "create", "token", "app", "--duration", "20m", "--audience", "vault"))
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 1200 {
		t.Fatalf("--duration 20m gave %vs", exp-iat)
	}
	if aud, _ := c["aud"].([]any); len(aud) != 1 || aud[0] != "vault" {
		t.Fatalf("--audience vault gave %v", c["aud"])
	}
	_, errOut, err := kubectlErr(t, "-n", ns, "create", "token", "app", "--duration", "5m")
	if err == nil || !strings.Contains(errOut, "spec.expirationSeconds") || !strings.Contains(errOut, "less than 10 minutes") {
		t.Fatalf("--duration 5m: %v %s", err, errOut)
	}
	kubectl(t, "-n", ns, "apply", "-f", manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  serviceAccountName: app
  containers:
  - name: c
    image: busybox
`))
	c = jwtPayload(t, kubectl(t, "-n", ns, "create", "token", "app", "--bound-object-kind", "Pod", "--bound-object-name", "p"))
	if k, _ := c["kubernetes.io"].(map[string]any); k == nil || k["pod"].(map[string]any)["name"] != "p" {
		t.Fatalf("bound token claims %v", c)
	}

}

func whoami(t *testing.T, ns, tok string) {
	out := kubectl(t, "auth", "whoami", "--token", tok, "-o", "json")
	var ssr struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &ssr); err != nil {
		t.Fatalf("whoami -o json: %v\n%s", err, out)
	}
	if ssr.Status.UserInfo.Username != "system:serviceaccount:"+ns+":app" || len(ssr.Status.UserInfo.Groups) != 3 {
		t.Fatalf("whoami: %+v", ssr.Status.UserInfo)
	}
	if out := kubectl(t, "auth", "whoami"); !strings.Contains(out, "admin") {
		t.Fatalf("admin whoami: %s", out)
	}

}

func canIAndRequests(t *testing.T, ns, tok string) {
	// can-i: yes exits 0, no exits 1; each answer matches the request.
	canI := func(args ...string) bool {
		t.Helper()
		stdout, stderr, err := kubectlErr(t, append([]string{"auth", "can-i"}, args...)...)
		var ee *exec.ExitError
		switch {
		case err == nil && strings.TrimSpace(stdout) == "yes":
			return true
		case asExit(err, &ee) && ee.ExitCode() == 1 && strings.HasPrefix(strings.TrimSpace(stdout), "no"):
			return false
		}
		t.Fatalf("can-i %v: %v\n%s\n%s", args, err, stdout, stderr)
		return false
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"create", "deployments", "-n", ns}, true},
		{[]string{"get", "secrets", "--all-namespaces"}, true},
		{[]string{"get", "configmaps", "-n", ns, "--token", tok}, true},
		{[]string{"watch", "pods", "-n", ns, "--token", tok}, true},
		{[]string{"get", "secrets", "-n", ns, "--token", tok}, false},
		{[]string{"get", "configmaps", "-n", "default", "--token", tok}, false},
		{[]string{"create", "configmaps", "-n", ns, "--token", tok}, false},
		{[]string{"get", "nodes", "--token", tok}, false},
		{[]string{"get", "/api", "--token", tok}, true},
		{[]string{"get", "/metrics", "--token", tok}, false},
	} {
		if got := canI(tc.args...); got != tc.want {
			t.Errorf("can-i %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	// can-i --list: the ServiceAccount's rules in its namespace.
	out := kubectl(t, "auth", "can-i", "--list", "-n", ns, "--token", tok)
	var sawCM bool
	for _, l := range lines(out) {
		f := fields(l)
		if len(f) > 0 && (f[0] == "secrets" || strings.HasPrefix(f[0], "secrets.")) {
			t.Errorf("can-i --list lists secrets:\n%s", out)
		}
		if len(f) > 0 && f[0] == "configmaps" && strings.Contains(l, "[get list watch]") {
			sawCM = true
		}
	}
	if !sawCM {
		t.Errorf("can-i --list has no configmaps [get list watch]:\n%s", out)
	}
	// What can-i said, the requests get.
	if _, errOut, err := kubectlErr(t, "-n", ns, "get", "secrets", "--token", tok); err == nil || !strings.Contains(errOut, "forbidden") {
		t.Errorf("get secrets as the ServiceAccount: %v %s", err, errOut)
	}
	if out := kubectl(t, "-n", ns, "get", "configmap", "cm", "--token", tok, "-o", "name"); strings.TrimSpace(out) != "configmap/cm" {
		t.Errorf("get configmap as the ServiceAccount: %q", out)
	}
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}
