package hardening

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/server/servertest"
)

// Paths of the bad-input table. regressWeb is a Service the test creates
// first, so that updates, patches and deletes have something to miss.
const (
	regressSvcs   = "/api/v1/namespaces/default/services"
	regressWeb    = regressSvcs + "/regress-web"
	regressDeps   = "/apis/apps/v1/namespaces/default/deployments"
	regressPods   = "/api/v1/namespaces/default/pods"
	regressNSs    = "/api/v1/namespaces"
	ctJSON        = "application/json"
	ctYAML        = "application/yaml"
	ctProto       = "application/vnd.kubernetes.protobuf"
	ctMerge       = "application/merge-patch+json"
	ctJSONPatch   = "application/json-patch+json"
	ctStrategic   = "application/strategic-merge-patch+json"
	regressWebObj = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"regress-web","labels":{"app":"web"}},"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80}]}}`
)

// svcJSON is a Service body named name with spec, raw JSON.
func svcJSON(name, spec string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":` + name + `},"spec":` + spec + `}`)
}

// okSpec is a valid Service spec.
const okSpec = `{"ports":[{"port":80}]}`

// regressCase is one bad request and the 4xx it gets.
type regressCase struct {
	name   string
	method string
	path   string // escaped path and query, sent verbatim
	ct     string
	body   []byte
	code   int
}

// regressBadInput is the probe's bad-input set that the server held
// against: every case is a 4xx with a Status, and writes nothing.
func regressBadInput() []regressCase {
	P, Po, Pa, G, D := http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodGet, http.MethodDelete
	deep := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	longName := strings.Repeat("a", 300)
	pb := func(b ...byte) []byte { return append([]byte("k8s\x00"), b...) }
	laughs := "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
	for i, prev := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		cur := string(rune('b' + i))
		laughs += cur + ": &" + cur + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
	}
	badCont := base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":-1,"start":"../../x"}`))
	return []regressCase{
		// Malformed JSON bodies.
		{"json/empty body", P, regressSvcs, ctJSON, []byte{}, 400},
		{"json/open brace", P, regressSvcs, ctJSON, []byte(`{`), 400},
		{"json/array", P, regressSvcs, ctJSON, []byte(`[]`), 400},
		{"json/null", P, regressSvcs, ctJSON, []byte(`null`), 400},
		{"json/string", P, regressSvcs, ctJSON, []byte(`"svc"`), 400},
		{"json/number", P, regressSvcs, ctJSON, []byte(`123`), 400},
		{"json/trailing garbage", P, regressSvcs, ctJSON, append(svcJSON(`"trail"`, okSpec), "}}"...), 400},
		{"json/two objects", P, regressSvcs, ctJSON, append(svcJSON(`"two-a"`, okSpec), svcJSON(`"two-b"`, okSpec)...), 400},
		{"json/port is a string", P, regressSvcs, ctJSON, svcJSON(`"pstr"`, `{"ports":[{"port":"eighty"}]}`), 400},
		{"json/port overflows int32", P, regressSvcs, ctJSON, svcJSON(`"pbig"`, `{"ports":[{"port":99999999999999999999}]}`), 400},
		{"json/port is a float", P, regressSvcs, ctJSON, svcJSON(`"pflt"`, `{"ports":[{"port":80.5}]}`), 400},
		{"json/metadata is an array", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":[],"spec":{}}`), 400},
		{"json/duplicate field", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"dup","name":"dup2"},"spec":` + okSpec + `}`), 400},
		{"json/unknown top-level field, Strict", P, regressSvcs + "?fieldValidation=Strict", ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","bogus":1,"metadata":{"name":"unk1"},"spec":` + okSpec + `}`), 400},
		{"json/unknown spec field, Strict", P, regressSvcs + "?fieldValidation=Strict", ctJSON, svcJSON(`"unk2"`, `{"bogus":true,"ports":[{"port":80}]}`), 400},
		{"json/unknown port field, default Strict", P, regressSvcs, ctJSON, svcJSON(`"unk3"`, `{"ports":[{"port":80,"bogus":1}]}`), 400},
		{"json/bad fieldValidation", P, regressSvcs + "?fieldValidation=Loose", ctJSON, svcJSON(`"fv"`, okSpec), 400},
		{"json/NUL byte outside a string", P, regressSvcs, ctJSON, []byte("{\"apiVersion\":\"v1\",\x00\"kind\":\"Service\"}"), 400},
		{"json/raw control byte in a string", P, regressSvcs, ctJSON, svcJSON("\"ctl\x01\"", okSpec), 400},
		{"json/array depth bomb", P, regressSvcs, ctJSON, svcJSON(`"deep"`, `{"selector":`+deep("[", "]", 100000)+`}`), 400},
		{"json/object depth bomb", P, regressSvcs, ctJSON, svcJSON(`"deep2"`, `{"selector":`+deep(`{"a":`, "}", 20000)+`}`), 400},
		{"json/truncated in a string", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"tr`), 400},

		// Wrong kinds and apiVersions.
		{"kind/Pod to services", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"kp"},"spec":{"containers":[{"name":"c","image":"i"}]}}`), 400},
		{"kind/Deployment with v1", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Deployment","metadata":{"name":"kd"}}`), 400},
		{"kind/apps/v1 Service", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"apps/v1","kind":"Service","metadata":{"name":"ka"},"spec":` + okSpec + `}`), 400},
		{"kind/apiVersion v2", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v2","kind":"Service","metadata":{"name":"kv2"},"spec":` + okSpec + `}`), 400},
		{"kind/Status", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Status","metadata":{"name":"ks"}}`), 400},
		{"kind/List", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"List","items":[` + string(svcJSON(`"kl"`, okSpec)) + `]}`), 400},
		{"kind/kind is a number", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":7,"metadata":{"name":"kn"},"spec":` + okSpec + `}`), 400},
		{"kind/Service to deployments", P, regressDeps, ctJSON, svcJSON(`"ksd"`, okSpec), 400},

		// Invalid names, in the body.
		{"name/300 characters", P, regressSvcs, ctJSON, svcJSON(`"`+longName+`"`, okSpec), 422},
		{"name/64 characters", P, regressSvcs, ctJSON, svcJSON(`"`+strings.Repeat("b", 64)+`"`, okSpec), 422},
		{"name/upper case", P, regressSvcs, ctJSON, svcJSON(`"Web"`, okSpec), 422},
		{"name/slash", P, regressSvcs, ctJSON, svcJSON(`"a/b"`, okSpec), 422},
		{"name/dot dot", P, regressSvcs, ctJSON, svcJSON(`".."`, okSpec), 422},
		{"name/dot", P, regressSvcs, ctJSON, svcJSON(`"."`, okSpec), 422},
		{"name/percent", P, regressSvcs, ctJSON, svcJSON(`"a%2Fb"`, okSpec), 422},
		{"name/empty", P, regressSvcs, ctJSON, svcJSON(`""`, okSpec), 422},
		{"name/escaped NUL", P, regressSvcs, ctJSON, svcJSON(`"a\u0000b"`, okSpec), 422},
		{"name/invalid UTF-8", P, regressSvcs, ctJSON, svcJSON("\"a\xff\xfeb\"", okSpec), 422},
		{"name/leading digit (DNS-1035)", P, regressSvcs, ctJSON, svcJSON(`"1web"`, okSpec), 422},
		{"name/bad generateName", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"generateName":"Bad_"},"spec":` + okSpec + `}`), 422},
		{"name/namespace differs from the URL's", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"nsx","namespace":"kube-system"},"spec":` + okSpec + `}`), 400},
		{"name/namespace name invalid", P, regressNSs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Bad.NS"}}`), 422},
		{"name/label value with invalid UTF-8", P, regressSvcs, ctJSON, []byte("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"lbl\",\"labels\":{\"a\":\"\xc3\x28\"}},\"spec\":" + okSpec + "}"), 422},
		{"name/label key invalid", P, regressSvcs, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"lbk","labels":{"-a/b/c":"x"}},"spec":` + okSpec + `}`), 422},

		// Invalid specs.
		{"spec/port 0", P, regressSvcs, ctJSON, svcJSON(`"p0"`, `{"ports":[{"port":0}]}`), 422},
		{"spec/port 70000", P, regressSvcs, ctJSON, svcJSON(`"p7"`, `{"ports":[{"port":70000}]}`), 422},
		{"spec/protocol FOO", P, regressSvcs, ctJSON, svcJSON(`"pfoo"`, `{"ports":[{"port":80,"protocol":"FOO"}]}`), 422},
		{"spec/type Bogus", P, regressSvcs, ctJSON, svcJSON(`"tb"`, `{"type":"Bogus","ports":[{"port":80}]}`), 422},
		{"spec/clusterIP not an IP", P, regressSvcs, ctJSON, svcJSON(`"cip"`, `{"clusterIP":"not-an-ip","ports":[{"port":80}]}`), 422},
		{"spec/nodePort out of range", P, regressSvcs, ctJSON, svcJSON(`"npr"`, `{"type":"NodePort","ports":[{"port":80,"nodePort":1}]}`), 422},
		{"spec/duplicate ports", P, regressSvcs, ctJSON, svcJSON(`"dupp"`, `{"ports":[{"name":"a","port":80},{"name":"a","port":80}]}`), 422},
		{"spec/deployment replicas -1", P, regressDeps, ctJSON, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"dneg"},"spec":{"replicas":-1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`), 422},
		{"spec/deployment selector misses the template", P, regressDeps, ctJSON, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"dsel"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`), 422},
		{"spec/pod without containers", P, regressPods, ctJSON, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pnc"},"spec":{"containers":[]}}`), 422},

		// YAML bodies.
		{"yaml/unclosed flow sequence", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: y1\nspec: [\n"), 400},
		{"yaml/tab indentation", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\nmetadata:\n\tname: y2\n"), 400},
		{"yaml/alias bomb", P, regressSvcs, ctYAML, []byte(laughs), 400},
		{"yaml/non-string keys", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: y3}\nspec: {1: 2}\n"), 400},
		{"yaml/unknown field", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: y4}\nspec: {bogus: 1, ports: [{port: 80}]}\n"), 400},
		{"yaml/scalar document", P, regressSvcs, ctYAML, []byte("just a string\n"), 400},
		{"yaml/depth bomb", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: y5}\nspec: {selector: " + deep("[", "]", 20000) + "}\n"), 400},
		{"yaml/NUL byte", P, regressSvcs, ctYAML, []byte("apiVersion: v1\nkind: Service\x00\nmetadata: {name: y6}\n"), 400},

		// Protobuf bodies.
		{"protobuf/no magic", P, regressSvcs, ctProto, []byte{0x0a, 0x02, 'v', '1'}, 400},
		{"protobuf/magic only", P, regressSvcs, ctProto, pb(), 415},
		{"protobuf/truncated varint", P, regressSvcs, ctProto, pb(0x0a, 0xff, 0xff, 0xff), 400},
		{"protobuf/length past the end", P, regressSvcs, ctProto, pb(0x0a, 0x7f, 0x0a), 400},
		{"protobuf/Pod to services", P, regressSvcs, ctProto, pb(0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd', 0x12, 0x00), 400},
		{"protobuf/random bytes after the envelope", P, regressSvcs, ctProto, pb(0x0a, 0x0d, 0x0a, 0x02, 'v', '1', 0x12, 0x07, 'S', 'e', 'r', 'v', 'i', 'c', 'e', 0x12, 0x04, 0xde, 0xad, 0xbe, 0xef), 400},

		// Content-Types.
		{"ct/text/plain", P, regressSvcs, "text/plain", svcJSON(`"ct1"`, okSpec), 415},
		{"ct/application/xml", P, regressSvcs, "application/xml", []byte(`<Service/>`), 415},
		{"ct/unparsable", P, regressSvcs, ";;;=", svcJSON(`"ct2"`, okSpec), 415},
		{"ct/multipart", P, regressSvcs, "multipart/form-data; boundary=x", []byte("--x--"), 415},
		{"ct/patch type on create", P, regressSvcs, ctJSONPatch, []byte(`[]`), 415},
		{"ct/JSON on PATCH", Pa, regressWeb, ctJSON, []byte(`{}`), 415},
		{"ct/no Content-Type on PATCH", Pa, regressWeb, "", []byte(`{}`), 415},

		// JSON patches.
		{"jsonpatch/not an array", Pa, regressWeb, ctJSONPatch, []byte(`{}`), 400},
		{"jsonpatch/invalid JSON", Pa, regressWeb, ctJSONPatch, []byte(`[{`), 400},
		{"jsonpatch/remove a missing path", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"remove","path":"/spec/nope"}]`), 422},
		{"jsonpatch/replace a missing path", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"replace","path":"/metadata/annotations/x","value":"y"}]`), 422},
		{"jsonpatch/unknown op", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"frobnicate","path":"/spec"}]`), 400},
		{"jsonpatch/failed test", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"test","path":"/metadata/name","value":"other"},{"op":"add","path":"/metadata/labels/x","value":"y"}]`), 422},
		{"jsonpatch/path without a slash", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"add","path":"spec","value":{}}]`), 422},
		{"jsonpatch/move from a missing path", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"move","from":"/spec/nope","path":"/spec/x"}]`), 422},
		{"jsonpatch/array index out of range", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"replace","path":"/spec/ports/9/port","value":81}]`), 422},
		{"jsonpatch/change the kind", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"replace","path":"/kind","value":"Pod"}]`), 400},
		{"jsonpatch/change the name", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"replace","path":"/metadata/name","value":"other"}]`), 400},
		{"jsonpatch/invalid port", Pa, regressWeb, ctJSONPatch, []byte(`[{"op":"replace","path":"/spec/ports/0/port","value":0}]`), 422},
		{"jsonpatch/missing object", Pa, regressSvcs + "/no-such-svc", ctJSONPatch, []byte(`[{"op":"add","path":"/metadata/labels/x","value":"y"}]`), 404},

		// Merge patches.
		{"merge/array", Pa, regressWeb, ctMerge, []byte(`[]`), 400},
		{"merge/string", Pa, regressWeb, ctMerge, []byte(`"x"`), 400},
		{"merge/invalid JSON", Pa, regressWeb, ctMerge, []byte(`{"spec":`), 400},
		{"merge/ports not a list", Pa, regressWeb, ctMerge, []byte(`{"spec":{"ports":"x"}}`), 400},
		{"merge/unknown field", Pa, regressWeb, ctMerge, []byte(`{"spec":{"bogus":1}}`), 400},
		{"merge/invalid port", Pa, regressWeb, ctMerge, []byte(`{"spec":{"ports":[{"port":0}]}}`), 422},
		{"merge/depth bomb", Pa, regressWeb, ctMerge, []byte(`{"metadata":{"labels":` + deep(`{"a":`, "}", 20000) + `}}`), 400},

		// Strategic merge patches.
		{"strategic/bad $patch directive", Pa, regressWeb, ctStrategic, []byte(`{"spec":{"$patch":"frobnicate"}}`), 400},
		{"strategic/$retainKeys not a list", Pa, regressWeb, ctStrategic, []byte(`{"spec":{"$retainKeys":"ports"}}`), 400},
		{"strategic/$setElementOrder not a list", Pa, regressWeb, ctStrategic, []byte(`{"spec":{"$setElementOrder/ports":"x"}}`), 400},
		{"strategic/$deleteFromPrimitiveList not a list", Pa, regressWeb, ctStrategic, []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":"x"}}`), 400},
		{"strategic/array", Pa, regressWeb, ctStrategic, []byte(`[]`), 400},
		{"strategic/list element without its merge key", Pa, regressWeb, ctStrategic, []byte(`{"spec":{"ports":[{"$patch":"delete"}]}}`), 400},

		// Updates.
		{"put/name differs from the URL's", Po, regressWeb, ctJSON, svcJSON(`"other"`, okSpec), 400},
		{"put/stale resourceVersion", Po, regressWeb, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"regress-web","resourceVersion":"1"},"spec":` + okSpec + `}`), 409},
		{"put/resourceVersion not a number", Po, regressWeb, ctJSON, []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"regress-web","resourceVersion":"abc"},"spec":` + okSpec + `}`), 409},
		{"put/dot dot", Po, regressSvcs + "/..", ctJSON, svcJSON(`".."`, okSpec), 404},
		{"put/status garbage", Po, regressWeb + "/status", ctJSON, []byte(`{"status":`), 400},

		// Query parameters of reads.
		{"query/labelSelector open paren", G, regressSvcs + "?labelSelector=a%3D(", "", nil, 400},
		{"query/labelSelector unclosed in", G, regressSvcs + "?labelSelector=a+in+(b", "", nil, 400},
		{"query/labelSelector bare !", G, regressSvcs + "?labelSelector=!", "", nil, 400},
		{"query/labelSelector invalid key", G, regressSvcs + "?labelSelector=-a%3Db", "", nil, 400},
		{"query/labelSelector value of 64 characters", G, regressSvcs + "?labelSelector=a%3D" + strings.Repeat("v", 64), "", nil, 400},
		{"query/fieldSelector unsupported field", G, regressSvcs + "?fieldSelector=spec.bogus%3Dx", "", nil, 400},
		{"query/fieldSelector without an operator", G, regressSvcs + "?fieldSelector=metadata.name", "", nil, 400},
		{"query/fieldSelector set operator", G, regressSvcs + "?fieldSelector=metadata.name+in+(a)", "", nil, 400},
		{"query/limit not a number", G, regressSvcs + "?limit=abc", "", nil, 400},
		{"query/list resourceVersion not a number", G, regressSvcs + "?resourceVersion=abc", "", nil, 400},
		{"query/list resourceVersion negative", G, regressSvcs + "?resourceVersion=-5", "", nil, 400},
		{"query/resourceVersionMatch bogus", G, regressSvcs + "?resourceVersion=1&resourceVersionMatch=Bogus", "", nil, 422},
		{"query/resourceVersionMatch without resourceVersion", G, regressSvcs + "?resourceVersionMatch=Exact", "", nil, 422},
		{"query/resourceVersionMatch Exact at 0", G, regressSvcs + "?resourceVersion=0&resourceVersionMatch=Exact", "", nil, 422},
		{"query/limit overflows", G, regressSvcs + "?limit=99999999999999999999999", "", nil, 400},
		{"query/continue not base64", G, regressSvcs + "?limit=1&continue=%25%25%25", "", nil, 400},
		{"query/continue base64 garbage", G, regressSvcs + "?limit=1&continue=" + base64.RawURLEncoding.EncodeToString([]byte("garbage")), "", nil, 400},
		{"query/continue forged", G, regressSvcs + "?limit=1&continue=" + badCont, "", nil, 400},
		{"query/timeoutSeconds not a number", G, regressSvcs + "?watch=true&timeoutSeconds=abc", "", nil, 400},
		{"query/timeoutSeconds negative", G, regressSvcs + "?watch=true&timeoutSeconds=-1", "", nil, 400},
		{"query/watch from a bad resourceVersion", G, regressSvcs + "?watch=true&resourceVersion=abc", "", nil, 400},

		// Query parameters of writes: each would write if accepted.
		{"query/dryRun bogus on create", P, regressSvcs + "?dryRun=Bogus", ctJSON, svcJSON(`"dry"`, okSpec), 422},
		{"query/dryRun lower case on create", P, regressSvcs + "?dryRun=all", ctJSON, svcJSON(`"dry2"`, okSpec), 422},
		{"query/dryRun bogus on patch", Pa, regressWeb + "?dryRun=Bogus", ctMerge, []byte(`{"metadata":{"labels":{"dry":"run"}}}`), 422},
		{"query/dryRun bogus on update", Po, regressWeb + "?dryRun=Bogus", ctJSON, []byte(regressWebObj), 422},
		{"query/dryRun bogus on delete", D, regressWeb + "?dryRun=Bogus", "", nil, 422},
		{"query/dryRun bogus in the delete body", D, regressWeb, ctJSON, []byte(`{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["Bogus"]}`), 422},
		{"query/dryRun bogus on deletecollection", D, regressSvcs + "?dryRun=Bogus", "", nil, 422},
		{"query/propagationPolicy bogus", D, regressWeb + "?propagationPolicy=Bogus", "", nil, 422},
		{"query/gracePeriodSeconds not a number", D, regressWeb + "?gracePeriodSeconds=abc", "", nil, 400},
		{"query/delete body garbage", D, regressWeb, ctJSON, []byte(`{"propagationPolicy":`), 400},
		{"query/delete body bad precondition", D, regressWeb, ctJSON, []byte(`{"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"uid":"not-the-uid"}}`), 409},

		// Names in the path: traversal, encodings, sizes.
		{"path/get dot dot", G, regressSvcs + "/..", "", nil, 404},
		{"path/get %2e%2e", G, regressSvcs + "/%2e%2e", "", nil, 404},
		{"path/get %2e", G, regressSvcs + "/%2e", "", nil, 404},
		{"path/get a%2Fb", G, regressSvcs + "/a%2Fb", "", nil, 404},
		{"path/get %2F..%2F..%2Fetc", G, regressSvcs + "/%2F..%2F..%2Fetc%2Fpasswd", "", nil, 404},
		{"path/get NUL", G, regressSvcs + "/a%00b", "", nil, 404},
		{"path/get invalid UTF-8", G, regressSvcs + "/%ff%fe", "", nil, 404},
		{"path/get 300 characters", G, regressSvcs + "/" + longName, "", nil, 404},
		{"path/dot dot segments", G, regressSvcs + "/x/../../pods", "", nil, 404},
		{"path/delete %2e%2e", D, regressSvcs + "/%2e%2e", "", nil, 404},
		{"path/delete a%2Fb", D, regressSvcs + "/a%2Fregress-web", "", nil, 404},
		{"path/unknown resource", G, "/api/v1/namespaces/default/bogus", "", nil, 404},
		{"path/unknown group", G, "/apis/bogus.io/v1/things", "", nil, 404},
		{"path/unknown version", G, "/api/v2/namespaces", "", nil, 404},
		{"path/unknown subresource", G, regressWeb + "/bogus", "", nil, 404},
		{"path/binding of a missing pod", P, regressPods + "/no-such-pod/binding", ctJSON, []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"no-such-pod"},"target":{"kind":"Node","name":"n"}}`), 404},

		// Methods not allowed.
		{"method/PUT a collection", Po, regressSvcs, ctJSON, svcJSON(`"m1"`, okSpec), 405},
		{"method/PATCH a collection", Pa, regressSvcs, ctMerge, []byte(`{}`), 405},
		{"method/POST an object", P, regressWeb, ctJSON, svcJSON(`"regress-web"`, okSpec), 405},
		{"method/DELETE discovery", D, "/api/v1", "", nil, 405},
		{"method/POST version", P, "/version", ctJSON, []byte(`{}`), 405},
		{"method/POST healthz", P, "/healthz", ctJSON, []byte(`{}`), 405},
		{"method/TRACE", "TRACE", regressSvcs, "", nil, 405},
		{"method/made-up verb", "FROBNICATE", regressWeb, "", nil, 405},
		// TokenRequest and the self reviews (create-only, nothing stored).
		{"token/expirationSeconds too small", P, regressSATok, ctJSON, []byte(`{"spec":{"expirationSeconds":599}}`), 422},
		{"token/expirationSeconds over 2^32", P, regressSATok, ctJSON, []byte(`{"spec":{"expirationSeconds":4294967297}}`), 422},
		{"token/expirationSeconds a string", P, regressSATok, ctJSON, []byte(`{"spec":{"expirationSeconds":"1h"}}`), 400},
		{"token/unknown field", P, regressSATok, ctJSON, []byte(`{"spec":{"bogus":1}}`), 400},
		{"token/another kind", P, regressSATok, ctJSON, []byte(`{"kind":"Pod"}`), 400},
		{"token/bound to a ConfigMap", P, regressSATok, ctJSON, []byte(`{"spec":{"boundObjectRef":{"kind":"ConfigMap","apiVersion":"v1","name":"x"}}}`), 400},
		{"token/bound object without a name", P, regressSATok, ctJSON, []byte(`{"spec":{"boundObjectRef":{"kind":"Pod"}}}`), 422},
		{"token/bound pod missing", P, regressSATok, ctJSON, []byte(`{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"nopod"}}}`), 404},
		{"token/ServiceAccount missing", P, "/api/v1/namespaces/default/serviceaccounts/nosa/token", ctJSON, []byte(`{"spec":{}}`), 404},
		{"token/GET", G, regressSATok, "", nil, 405},
		{"review/no attributes", P, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ctJSON, []byte(`{"spec":{}}`), 422},
		{"review/both attributes", P, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ctJSON, []byte(`{"spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"verb":"get","path":"/"}}}`), 422},
		{"review/bad field selector", P, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ctJSON, []byte(`{"spec":{"resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"rawSelector":"a!b"}}}}`), 422},
		{"review/whoami not JSON", P, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ctJSON, []byte(`{`), 400},
	}
}

// regressSATok is the token subresource of the default ServiceAccount
// (made by the serviceaccount controller).
const regressSATok = "/api/v1/namespaces/default/serviceaccounts/default/token"

// TestRegressBadInput sends the probe's bad requests to a real server:
// each gets its 4xx (not a 5xx, not a hang) with a Status naming a reason
// and the same code, the server still answers afterwards, and no stored
// object changed.
func TestRegressBadInput(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	h := newRegressHTTP(t, s, s.Bundle().AdminToken)
	ctx := context.Background()
	r, err := h.do(ctx, http.MethodPost, regressSvcs, ctJSON, []byte(regressWebObj))
	if err != nil || r.code != http.StatusCreated {
		t.Fatalf("create regress-web: %v %d %.300q", err, r.code, r.body)
	}
	cases := regressBadInput()
	if len(cases) < 100 {
		t.Fatalf("%d cases, want at least 100", len(cases))
	}
	before := h.settled(t, "/apis/discovery.k8s.io/v1/endpointslices default/regress-web-")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, regressTimeout)
			defer cancel()
			r, err := h.do(ctx, tc.method, tc.path, tc.ct, tc.body)
			if err != nil {
				t.Fatalf("%s %.120s: %v (a hang or a dropped connection)", tc.method, tc.path, err)
			}
			if r.code != tc.code {
				t.Errorf("%s %.120s: %d, want %d; body %.300q", tc.method, tc.path, r.code, tc.code, r.body)
			}
			if r.code < 400 || r.code > 499 {
				t.Errorf("not a 4xx")
			}
			regressStatus(t, r)

			after := h.snapshot(t) // also: the server still serves
			if gone, added := regressMissing(before, after), regressMissing(after, before); len(gone)+len(added) > 0 {
				t.Errorf("stored objects changed: gone %v, new %v", gone, added)
				before = after
			}
		})
	}
}

// TestRegressNamespaceTraversal: a namespace segment that tries to climb
// out ("..", "%2F") names a namespace of its own: the answer is a 4xx
// Status or an empty list, never the objects of another namespace (the
// default namespace holds the kubernetes Service).
func TestRegressNamespaceTraversal(t *testing.T) {
	s := startServer(t, servertest.Options{Logger: regressLogger(t)})
	h := newRegressHTTP(t, s, s.Bundle().AdminToken)
	for _, p := range []string{
		"/api/v1/namespaces/../services",
		"/api/v1/namespaces/%2e%2e/services",
		"/api/v1/namespaces/..%2Fdefault/services",
		"/api/v1/namespaces/x%2F..%2Fdefault/services",
		"/api/v1/namespaces/..%2F..%2Fdefault/services",
		"/api/v1/namespaces/x/..%2F..%2Fnamespaces%2Fdefault/services",
		"/api/v1/namespaces/%2Fdefault/services",
		"/api/v1/namespaces/default%2F/services",
		"/api/v1/namespaces/x/services/..%2F..%2Fdefault%2Fservices%2Fkubernetes",
	} {
		t.Run(p, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), regressTimeout)
			defer cancel()
			r, err := h.do(ctx, http.MethodGet, p, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.code >= 400 && r.code < 500 {
				regressStatus(t, r)
				return
			}
			if r.code != http.StatusOK {
				t.Fatalf("%d: %.300q", r.code, r.body)
			}
			var l struct {
				Kind  string            `json:"kind"`
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(r.body, &l); err != nil || l.Kind != "ServiceList" || len(l.Items) != 0 {
				t.Fatalf("answer leaks objects (err %v): %.300q", err, r.body)
			}
		})
	}
}
