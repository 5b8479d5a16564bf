package hardening

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/server/servertest"
)

// dryRunClient sends admin requests to srv and returns the status code and
// body of each.
type dryRunClient struct {
	t     *testing.T
	hc    *http.Client
	base  string
	token string
}

func newDryRunClient(t *testing.T, srv *servertest.Server) *dryRunClient {
	t.Helper()
	pool := x509.NewCertPool()
	b := srv.Bundle()
	if !pool.AppendCertsFromPEM(b.CACertPEM) {
		t.Fatal("no CA certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &dryRunClient{t: t, hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}, base: srv.URL(), token: b.AdminToken}
}

func (c *dryRunClient) do(method, path, contentType, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// dryRunData is the holder of lease name in default, "" when absent.
func (c *dryRunClient) dryRunData(name string) string {
	c.t.Helper()
	code, body := c.do(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/default/leases/"+name, "", "")
	if code == http.StatusNotFound {
		return ""
	}
	if code != http.StatusOK {
		c.t.Fatalf("get %s: %d %s", name, code, body)
	}
	var l struct {
		Spec struct {
			HolderIdentity string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		c.t.Fatal(err)
	}
	return l.Spec.HolderIdentity
}

func dryRunLease(name, holder string) string {
	return `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"` + name + `"},"spec":{"holderIdentity":"` + holder + `"}}`
}

// dryRunCheckRejected asserts a 422 Invalid Status on kind naming the field
// dryRun and the value.
func dryRunCheckRejected(t *testing.T, what string, code int, body, kind, value string) {
	t.Helper()
	if code != http.StatusUnprocessableEntity {
		t.Errorf("%s: got %d %s, want 422", what, code, body)
		return
	}
	var st struct {
		Kind    string `json:"kind"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Details struct {
			Group  string `json:"group"`
			Kind   string `json:"kind"`
			Causes []struct {
				Type  string `json:"reason"`
				Field string `json:"field"`
			} `json:"causes"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Errorf("%s: %v in %s", what, err, body)
		return
	}
	quoted, _ := json.Marshal(value)
	if st.Kind != "Status" || st.Reason != "Invalid" || st.Details.Kind != kind || st.Details.Group != "meta.k8s.io" ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "dryRun" || st.Details.Causes[0].Type != "FieldValueNotSupported" ||
		!strings.HasPrefix(st.Message, kind+`.meta.k8s.io "" is invalid: dryRun: Unsupported value: `) ||
		!strings.Contains(st.Message, string(quoted)) || !strings.HasSuffix(st.Message, `supported values: "All"`) {
		t.Errorf("%s: Status %s", what, body)
	}
}

// TestDryRunUnknownValuesWriteNothing: a dryRun other than All is refused
// (422, as the Kubernetes API does) by every write verb and writes nothing;
// dryRun=All answers as the write would and writes nothing either.
func TestDryRunUnknownValuesWriteNothing(t *testing.T) {
	srv := startServer(t, servertest.Options{})
	c := newDryRunClient(t, srv)
	const coll = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	const json_, merge = "application/json", "application/merge-patch+json"

	if code, body := c.do(http.MethodPost, coll, json_, dryRunLease("kept", "v1")); code != http.StatusCreated {
		t.Fatalf("create kept: %d %s", code, body)
	}
	for _, v := range []string{"true", "x", "server", "", "all"} {
		q := "?dryRun=" + url.QueryEscape(v)
		code, body := c.do(http.MethodPost, coll+q, json_, dryRunLease("fresh", "v"))
		dryRunCheckRejected(t, "create dryRun="+v, code, body, "CreateOptions", v)
		if got := c.dryRunData("fresh"); got != "" {
			t.Errorf("create dryRun=%q stored the object", v)
			c.do(http.MethodDelete, coll+"/fresh", "", "")
		}

		code, body = c.do(http.MethodPut, coll+"/kept"+q, json_, dryRunLease("kept", "put"))
		dryRunCheckRejected(t, "update dryRun="+v, code, body, "UpdateOptions", v)
		code, body = c.do(http.MethodPatch, coll+"/kept"+q, merge, `{"spec":{"holderIdentity":"patched"}}`)
		dryRunCheckRejected(t, "patch dryRun="+v, code, body, "PatchOptions", v)
		code, body = c.do(http.MethodDelete, coll+"/kept"+q, "", "")
		dryRunCheckRejected(t, "delete dryRun="+v, code, body, "DeleteOptions", v)
		code, body = c.do(http.MethodDelete, coll+q, "", "")
		dryRunCheckRejected(t, "deletecollection dryRun="+v, code, body, "DeleteOptions", v)
		opts := `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":[` + dryRunQuote(v) + `]}`
		code, body = c.do(http.MethodDelete, coll+"/kept", json_, opts)
		dryRunCheckRejected(t, "delete body dryRun="+v, code, body, "DeleteOptions", v)
		code, body = c.do(http.MethodDelete, coll, json_, opts)
		dryRunCheckRejected(t, "deletecollection body dryRun="+v, code, body, "DeleteOptions", v)
		if got := c.dryRunData("kept"); got != "v1" {
			t.Fatalf("after the writes with dryRun=%q the object holds %q, want v1 (or was deleted)", v, got)
		}
	}
	// A value list with All and something else is refused too.
	code, body := c.do(http.MethodPatch, coll+"/kept?dryRun=All&dryRun=true", merge, `{"spec":{"holderIdentity":"patched"}}`)
	if code != http.StatusUnprocessableEntity {
		t.Errorf("patch dryRun=All&dryRun=true: %d %s", code, body)
	}

	// dryRun=All: the answers of real writes, nothing stored.
	for _, w := range []struct {
		what, method, path, ct, body string
		want                         int
	}{
		{"create", http.MethodPost, coll, json_, dryRunLease("fresh", "v"), http.StatusCreated},
		{"update", http.MethodPut, coll + "/kept", json_, dryRunLease("kept", "put"), http.StatusOK},
		{"patch", http.MethodPatch, coll + "/kept", merge, `{"spec":{"holderIdentity":"patched"}}`, http.StatusOK},
		{"delete", http.MethodDelete, coll + "/kept", "", "", http.StatusOK},
		{"deletecollection", http.MethodDelete, coll, "", "", http.StatusOK},
	} {
		if code, body := c.do(w.method, w.path+"?dryRun=All", w.ct, w.body); code != w.want {
			t.Errorf("%s dryRun=All: %d %s, want %d", w.what, code, body, w.want)
		}
	}
	opts := `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`
	if code, body := c.do(http.MethodDelete, coll+"/kept", json_, opts); code != http.StatusOK {
		t.Errorf("delete with DeleteOptions dryRun [All]: %d %s", code, body)
	}
	if got := c.dryRunData("fresh"); got != "" {
		t.Error("create dryRun=All stored the object")
	}
	if got := c.dryRunData("kept"); got != "v1" {
		t.Errorf("after the dryRun=All writes the object holds %q, want v1 (or was deleted)", got)
	}
}

func dryRunQuote(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}
