package apiserver

import (
	"encoding/binary"
	"strings"
	"testing"
)

// pbMsg builds protobuf wire bytes: each part is a field number and either
// a string, []byte (a nested message) or uint64 (a varint).
func pbMsg(parts ...any) []byte {
	var b []byte
	for i := 0; i < len(parts); i += 2 {
		n := uint64(parts[i].(int))
		switch v := parts[i+1].(type) {
		case string:
			b = binary.AppendUvarint(b, n<<3|2)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case []byte:
			b = binary.AppendUvarint(b, n<<3|2)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case uint64:
			b = binary.AppendUvarint(b, n<<3)
			b = binary.AppendUvarint(b, v)
		}
	}
	return b
}

func pbEnvelope(apiVersion, kind string, raw []byte) []byte {
	return append([]byte("k8s\x00"), pbMsg(1, pbMsg(1, apiVersion, 2, kind), 2, raw)...)
}

// A protobuf body is decoded like the same JSON: created, defaulted, and
// strict about fields Skiff does not have (named in the 400).
func TestCreateProtobuf(t *testing.T) {
	e := newEnv(t)
	ct := "Content-Type: application/vnd.kubernetes.protobuf"
	// Pod: metadata=1{name=1}, spec=2{containers=2{name=1,image=2}, hostNetwork=11}
	pod := pbEnvelope("v1", "Pod", pbMsg(
		1, pbMsg(1, "pb"),
		2, pbMsg(2, pbMsg(1, "c", 2, "nginx"), 11, uint64(0))))
	r := e.must(201, "POST", "/api/v1/namespaces/default/pods", pod, ct, "Accept: application/vnd.kubernetes.protobuf, */*")
	if !strings.Contains(string(r.body), `"image":"nginx"`) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("created: %s %s", r.header.Get("Content-Type"), r.body)
	}
	e.must(200, "GET", "/api/v1/namespaces/default/pods/pb", nil)

	bad := pbEnvelope("v1", "Pod", pbMsg(1, pbMsg(1, "pb2"), 2, pbMsg(11, uint64(1))))
	r = e.must(400, "POST", "/api/v1/namespaces/default/pods", bad, ct)
	if !strings.Contains(string(r.body), `unknown field \"spec.hostNetwork\"`) {
		t.Errorf("unknown field: %s", r.body)
	}
	r = e.must(400, "POST", "/api/v1/namespaces/default/pods", pbEnvelope("v1", "Pod", pbMsg(77, "x")), ct)
	if !strings.Contains(string(r.body), "unknown field 77") {
		t.Errorf("unknown number: %s", r.body)
	}
	e.must(201, "POST", "/api/v1/namespaces/default/pods?fieldValidation=Ignore",
		pbEnvelope("v1", "Pod", pbMsg(1, pbMsg(1, "pb3"), 77, "x")), ct)
	// Update (PUT) takes protobuf too.
	cur := e.must(200, "GET", "/api/v1/namespaces/default/pods/pb", nil)
	rv := between(string(cur.body), `"resourceVersion":"`, `"`)
	upd := pbEnvelope("v1", "Pod", pbMsg(
		1, pbMsg(1, "pb", 6, rv, 11, pbMsg(1, "k", 2, "v")),
		2, pbMsg(2, pbMsg(1, "c", 2, "nginx"))))
	r = e.must(200, "PUT", "/api/v1/namespaces/default/pods/pb", upd, ct)
	if !strings.Contains(string(r.body), `"labels":{"k":"v"}`) {
		t.Errorf("updated: %s", r.body)
	}
}

func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(after, to)
	return v
}
