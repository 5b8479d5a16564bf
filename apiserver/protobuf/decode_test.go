package protobuf

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

// A minimal protobuf writer for hand-built bodies (the round trip against
// Kubernetes' own marshallers is in test/kubectl-compat).
type pb []byte

func (p pb) tag(num, wt int) pb { return binary.AppendUvarint(p, uint64(num<<3|wt)) }
func (p pb) varint(num int, v uint64) pb {
	return binary.AppendUvarint(p.tag(num, wireVarint), v)
}
func (p pb) bytes(num int, b []byte) pb {
	p = binary.AppendUvarint(p.tag(num, wireBytes), uint64(len(b)))
	return append(p, b...)
}
func (p pb) str(num int, s string) pb { return p.bytes(num, []byte(s)) }
func (p pb) msg(num int, m pb) pb     { return p.bytes(num, m) }

func envelope(apiVersion, kind string, raw pb) []byte {
	tm := pb{}.str(1, apiVersion).str(2, kind)
	return append([]byte("k8s\x00"), pb{}.msg(1, tm).bytes(2, raw).str(3, "").str(4, "")...)
}

// num finds a field number by JSON name in the root of kind (so that the
// tests do not hard-code Kubernetes' numbers twice).
func num(t *testing.T, msg int, name string) (int, int) {
	t.Helper()
	for _, f := range messages[msg].fields {
		if f.json == name {
			return int(f.num), f.msg
		}
	}
	t.Fatalf("%s has no field %q", messages[msg].name, name)
	return 0, 0
}

func rootMsg(t *testing.T, kind string) int {
	t.Helper()
	for _, r := range roots {
		if r.kind == kind {
			return r.msg
		}
	}
	t.Fatalf("no root %s", kind)
	return 0
}

func decodeMap(t *testing.T, j []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatalf("invalid JSON %s: %v", j, err)
	}
	return m
}

func TestToJSONService(t *testing.T) {
	svc := rootMsg(t, "Service")
	metaN, metaM := num(t, svc, "metadata")
	nameN, _ := num(t, metaM, "name")
	labelsN, _ := num(t, metaM, "labels")
	genN, _ := num(t, metaM, "generation")
	ctsN, _ := num(t, metaM, "creationTimestamp")
	specN, specM := num(t, svc, "spec")
	portsN, portM := num(t, specM, "ports")
	portN, _ := num(t, portM, "port")
	tpN, _ := num(t, portM, "targetPort")
	protoN, _ := num(t, portM, "protocol")
	typeN, _ := num(t, specM, "type")
	extN, _ := num(t, specM, "externalName")
	pnraN, _ := num(t, specM, "publishNotReadyAddresses")
	selN, _ := num(t, specM, "selector")
	allocN, _ := num(t, specM, "allocateLoadBalancerNodePorts")

	meta := pb{}.str(nameN, "web").
		msg(labelsN, pb{}.str(1, "app").str(2, "web")).
		msg(labelsN, pb{}.str(1, "tier").str(2, "a")).
		msg(labelsN, pb{}.str(1, "tier").str(2, "b")). // a repeated key: last wins
		varint(genN, 0).                               // zero, non-pointer: left out
		msg(ctsN, pb{})                                // zero Time: left out
	port := pb{}.varint(portN, 80).
		msg(tpN, pb{}.varint(1, 1).str(3, "http")).
		str(protoN, "TCP")
	spec := pb{}.msg(portsN, port).
		msg(portsN, pb{}.varint(portN, 443).msg(tpN, pb{}.varint(1, 0).varint(2, 8443))).
		str(typeN, "ClusterIP").
		str(extN, "").     // zero string of a field Skiff lacks: left out
		varint(pnraN, 0).  // zero bool: left out
		varint(allocN, 0). // *bool false: kept
		msg(selN, pb{}.str(1, "app").str(2, "web"))
	body := envelope("v1", "Service", pb{}.msg(metaN, meta).msg(specN, spec))

	j, err := ToJSON(body, true)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeMap(t, j)
	want := decodeMap(t, []byte(`{"apiVersion":"v1","kind":"Service",
		"metadata":{"name":"web","labels":{"app":"web","tier":"b"}},
		"spec":{"ports":[{"port":80,"targetPort":"http","protocol":"TCP"},{"port":443,"targetPort":8443}],
			"type":"ClusterIP","selector":{"app":"web"},"allocateLoadBalancerNodePorts":false}}`))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %v", j, want)
	}
}

func TestToJSONSpecials(t *testing.T) {
	ev := rootMsg(t, "Event")
	etN, _ := num(t, ev, "eventTime")
	ftN, _ := num(t, ev, "firstTimestamp")
	countN, _ := num(t, ev, "count")
	lease := rootMsg(t, "Lease")
	specN, specM := num(t, lease, "spec")
	durN, _ := num(t, specM, "leaseDurationSeconds")

	body := envelope("v1", "Event", pb{}.
		msg(etN, pb{}.varint(1, 1700000000).varint(2, 123456789)).
		msg(ftN, pb{}.varint(1, 1700000000).varint(2, 5)).
		varint(countN, uint64(math.MaxUint64))) // -1 as int32
	j, err := ToJSON(body, true)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeMap(t, j)
	if got["eventTime"] != "2023-11-14T22:13:20.123456Z" || got["firstTimestamp"] != "2023-11-14T22:13:20Z" || got["count"] != -1.0 {
		t.Errorf("got %s", j)
	}

	j, err = ToJSON(envelope("coordination.k8s.io/v1", "Lease", pb{}.msg(specN, pb{}.varint(durN, 0))), true)
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"leaseDurationSeconds":0}}` {
		t.Errorf("a pointer's zero is kept: %s", j)
	}
}

func TestToJSONInlineAndQuantity(t *testing.T) {
	pod := rootMsg(t, "Pod")
	specN, specM := num(t, pod, "spec")
	volN, volM := num(t, specM, "volumes")
	vnameN, _ := num(t, volM, "name")
	var srcN, srcM int
	for _, f := range messages[volM].fields {
		if f.inline {
			srcN, srcM = int(f.num), f.msg
		}
	}
	edN, edM := num(t, srcM, "emptyDir")
	limN, _ := num(t, edM, "sizeLimit")
	ctrN, ctrM := num(t, specM, "containers")
	resN, resM := num(t, ctrM, "resources")
	limitsN, _ := num(t, resM, "limits")

	vol := pb{}.str(vnameN, "scratch").msg(srcN, pb{}.msg(edN, pb{}.msg(limN, pb{}.str(1, "1Gi"))))
	ctr := pb{}.msg(resN, pb{}.msg(limitsN, pb{}.str(1, "cpu").msg(2, pb{}.str(1, "500m"))))
	j, err := ToJSON(envelope("v1", "Pod", pb{}.msg(specN, pb{}.msg(volN, vol).msg(ctrN, ctr))), true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"v1","kind":"Pod","spec":{"volumes":[{"name":"scratch","emptyDir":{"sizeLimit":"1Gi"}}],"containers":[{"resources":{"limits":{"cpu":"500m"}}}]}}`
	if string(j) != want {
		t.Errorf("got  %s\nwant %s", j, want)
	}
}

func TestToJSONErrors(t *testing.T) {
	ns := rootMsg(t, "Namespace")
	metaN, _ := num(t, ns, "metadata")
	cases := []struct {
		name   string
		body   []byte
		strict bool
		want   error
	}{
		{"no magic", []byte(`{"kind":"Namespace"}`), true, ErrMagic},
		{"unknown kind", envelope("example.com/v1", "Widget", nil), true, ErrUnsupportedKind},
		{"wrong group", envelope("apps/v1", "Service", nil), true, ErrUnsupportedKind},
		{"unknown field", envelope("v1", "Namespace", pb{}.str(99, "x")), true, ErrUnknownField},
		{"unknown nested field", envelope("v1", "Namespace", pb{}.msg(metaN, pb{}.varint(999, 1))), true, ErrUnknownField},
		{"wire type", envelope("v1", "Namespace", pb{}.varint(metaN, 1)), true, ErrMalformed},
		{"truncated", envelope("v1", "Namespace", pb{}.msg(metaN, pb{}.str(1, "abc")))[:20], true, ErrMalformed},
		{"group wire type", append([]byte("k8s\x00"), 0x0b), true, ErrMalformed},
		{"encoding", append(envelope("v1", "Namespace", nil), pb{}.str(3, "gzip")...), true, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := ToJSON(c.body, c.strict)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %s, %v; want %v", j, err, c.want)
			}
		})
	}
	// Not strict: unknown numbers are skipped.
	j, err := ToJSON(envelope("v1", "Namespace", pb{}.str(99, "x")), false)
	if err != nil || string(j) != `{"apiVersion":"v1","kind":"Namespace"}` {
		t.Errorf("non-strict: %s, %v", j, err)
	}
}

func TestToJSONRawJSON(t *testing.T) {
	body := append([]byte("k8s\x00"), pb{}.msg(1, pb{}.str(1, "v1").str(2, "Namespace")).
		str(2, `{"metadata":{"name":"x"}}`).str(4, "application/json")...)
	j, err := ToJSON(body, true)
	if err != nil || string(j) != `{"metadata":{"name":"x"}}` {
		t.Errorf("got %s, %v", j, err)
	}
}

// FuzzToJSON: ToJSON never panics, and what it returns is valid JSON.
func FuzzToJSON(f *testing.F) {
	f.Add(envelope("v1", "Namespace", pb{}.msg(1, pb{}.str(1, "x"))), true)
	f.Add(envelope("v1", "Service", pb{}.msg(2, pb{}.msg(1, pb{}.varint(3, 80)))), true)
	f.Add(envelope("apps/v1", "Deployment", pb{}.msg(2, pb{}.varint(1, 3))), false)
	f.Add(envelope("v1", "Pod", pb{}.msg(2, pb{}.msg(2, pb{}.str(1, "c")))), true)
	f.Add(envelope("v1", "Event", pb{}.msg(10, pb{}.varint(1, 5))), true)
	f.Add([]byte("k8s\x00\x0a\x00"), true)
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		j, err := ToJSON(body, strict)
		if err != nil {
			if !errors.Is(err, ErrMagic) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownField) && !errors.Is(err, ErrUnsupportedKind) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if !json.Valid(j) {
			t.Fatalf("invalid JSON %q", j)
		}
	})
}
