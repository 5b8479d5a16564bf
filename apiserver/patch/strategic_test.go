package patch

import (
	"strings"
	"testing"
)

// deployment is the Deployment of the Kubernetes task "Update API Objects in
// Place Using kubectl patch" (patch-demo), with a second container and some
// ports, env and volume mounts to merge.
const deployment = `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "patch-demo", "labels": {"app": "nginx"}, "finalizers": ["a/one", "b/two"]},
  "spec": {
    "replicas": 2,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [
          {"name": "patch-demo-ctr", "image": "nginx",
           "ports": [{"containerPort": 80, "name": "http"}],
           "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
           "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
          {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]}
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"effect": "NoSchedule", "key": "dedicated", "value": "test-team"}]
      }
    }
  }
}`

// withContainers returns the deployment with its containers list replaced.
func withContainers(containers string) string {
	return edit(compactString(`"containers": [
          {"name": "patch-demo-ctr", "image": "nginx",
           "ports": [{"containerPort": 80, "name": "http"}],
           "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
           "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
          {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]}
        ]`), `"containers":`+compactString(containers))
}

// edit returns the compact deployment with one occurrence of old replaced;
// it panics when old does not occur, so that a typo cannot make a case
// compare the deployment with itself.
func edit(old, new string) string {
	d := compactString(deployment)
	if !strings.Contains(d, old) {
		panic("edit: " + old + " not in " + d)
	}
	return strings.Replace(d, old, new, 1)
}

// compactString drops the insignificant whitespace of a JSON text.
func compactString(s string) string {
	v, err := decodeJSON([]byte(s))
	if err != nil {
		// A fragment such as `"containers": [...]`: compact it as the
		// value of an object.
		v, err = decodeJSON([]byte("{" + s + "}"))
		if err != nil {
			panic(err)
		}
		out, _ := encodeJSON(v)
		return string(out[1 : len(out)-1])
	}
	out, _ := encodeJSON(v)
	return string(out)
}

func TestStrategicMergeDeployment(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  string
	}{
		{
			name:  "change a container's image by name",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx:1.27"}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx:1.27",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]}]`),
		},
		{
			// The kubectl patch task's patch-file-containers.yaml: the
			// strategic merge keeps the existing container and adds redis.
			name:  "add a container",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]},
			  {"name": "patch-demo-ctr-2", "image": "redis"}]`),
		},
		{
			name:  "delete a container with $patch: delete",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]`),
		},
		{
			name:  "delete a container that is not there",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"ghost","$patch":"delete"}]}}}}`,
			want:  deployment,
		},
		{
			name: "ports by containerPort, env by name, volumeMounts by mountPath inside a container",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"patch-demo-ctr",
			  "ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"name":"https"}],
			  "env":[{"name":"B","value":"two"},{"name":"C","value":"3"},{"name":"A","$patch":"delete"}],
			  "volumeMounts":[{"mountPath":"/data","readOnly":true},{"mountPath":"/cache","name":"cache"}]}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443, "name": "https"}],
			   "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": true}, {"name": "cache", "mountPath": "/cache"}]},
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]}]`),
		},
		{
			name:  "null deletes a field of a merged element",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","args":null,"command":["sh"]}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
			  {"name": "sidecar", "image": "busybox", "command": ["sh"]}]`),
		},
		{
			name:  "a list with no merge key (args) is replaced",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","args":["sleep","2d"]}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "2d"]}]`),
		},
		{
			name:  "$patch: replace on the containers list",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x","env":null},{"$patch":"replace"}]}}}}`,
			want:  withContainers(`[{"name":"only","image":"x"}]`),
		},
		{
			name: "new element: nulls dropped, nested keyed lists built",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"x","args":null,
			  "ports":[{"containerPort":9090},{"containerPort":9091,"$patch":"delete"}]}]}}}}`,
			want: withContainers(`[
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]},
			  {"name": "new", "image": "x", "ports": [{"containerPort": 9090}]}]`),
		},
		{
			name: "$setElementOrder reorders containers, new ones included",
			patch: `{"spec":{"template":{"spec":{
			  "$setElementOrder/containers":[{"name":"sidecar"},{"name":"added"},{"name":"patch-demo-ctr"}],
			  "containers":[{"name":"added","image":"y"}]}}}}`,
			want: withContainers(`[
			  {"name": "sidecar", "image": "busybox", "args": ["sleep", "1d"]},
			  {"name": "added", "image": "y"},
			  {"name": "patch-demo-ctr", "image": "nginx",
			   "ports": [{"containerPort": 80, "name": "http"}],
			   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
			   "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]`),
		},
		{
			name:  "$setElementOrder on an atomic list is accepted and ignored",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$setElementOrder/args":["1d","sleep"]}]}}}}`,
			want:  deployment,
		},
		{
			name:  "tolerations have no merge key and are replaced",
			patch: `{"spec":{"template":{"spec":{"tolerations":[{"effect":"NoSchedule","key":"disktype","value":"ssd"}]}}}}`,
			want: edit(
				`"tolerations":[{"effect":"NoSchedule","key":"dedicated","value":"test-team"}]`,
				`"tolerations":[{"effect":"NoSchedule","key":"disktype","value":"ssd"}]`),
		},
		{
			name:  "volumes by name",
			patch: `{"spec":{"template":{"spec":{"volumes":[{"name":"data","emptyDir":null,"hostPath":{"path":"/srv"}},{"name":"cache","emptyDir":{}}]}}}}`,
			want: edit(
				`"volumes":[{"emptyDir":{},"name":"data"}]`,
				`"volumes":[{"hostPath":{"path":"/srv"},"name":"data"},{"emptyDir":{},"name":"cache"}]`),
		},
		{
			name:  "finalizers merge as a set",
			patch: `{"metadata":{"finalizers":["b/two","c/three","c/three"]}}`,
			want: edit(`"finalizers":["a/one","b/two"]`,
				`"finalizers":["a/one","b/two","c/three"]`),
		},
		{
			name:  "$deleteFromPrimitiveList removes finalizers",
			patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a/one","zzz"]}}`,
			want: edit(`"finalizers":["a/one","b/two"]`,
				`"finalizers":["b/two"]`),
		},
		{
			name:  "$deleteFromPrimitiveList and additions in one patch",
			patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b/two"],"finalizers":["d/four"],"$setElementOrder/finalizers":["d/four","a/one"]}}`,
			want: edit(`"finalizers":["a/one","b/two"]`,
				`"finalizers":["d/four","a/one"]`),
		},
		{
			name:  "$patch: replace on a map",
			patch: `{"spec":{"selector":{"$patch":"replace","matchLabels":{"app":"web"}}}}`,
			want: edit(`"selector":{"matchLabels":{"app":"nginx"}}`,
				`"selector":{"matchLabels":{"app":"web"}}`),
		},
		{
			name:  "$patch: replace on a map whose values are maps",
			patch: `{"spec":{"template":{"metadata":{"$patch":"replace","annotations":{"x":"y","gone":null}}}}}`,
			want: edit(`"metadata":{"labels":{"app":"nginx"}},"spec":{"containers"`,
				`"metadata":{"annotations":{"x":"y"}},"spec":{"containers"`),
		},
		{
			name:  "$patch: delete on a map removes it",
			patch: `{"spec":{"selector":{"$patch":"delete"}}}`,
			want:  edit(`"selector":{"matchLabels":{"app":"nginx"}},`, ``),
		},
		{
			name:  "$patch: delete on a missing map adds nothing",
			patch: `{"spec":{"strategy":{"$patch":"delete"}}}`,
			want:  deployment,
		},
		{
			name:  "labels: null deletes, values merge",
			patch: `{"metadata":{"labels":{"app":null,"tier":"web"}}}`,
			want:  edit(`"labels":{"app":"nginx"},"name"`, `"labels":{"tier":"web"},"name"`),
		},
		{
			name:  "empty containers list changes nothing",
			patch: `{"spec":{"template":{"spec":{"containers":[]}}}}`,
			want:  deployment,
		},
		{
			name:  "null deletes a keyed list",
			patch: `{"spec":{"template":{"spec":{"volumes":null}}}}`,
			want:  edit(`,"volumes":[{"emptyDir":{},"name":"data"}]`, ``),
		},
		{
			name:  "$retainKeys clears the fields it does not list",
			patch: `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},"selector":{"$retainKeys":["matchExpressions"]}}}`,
			want: edit(`"selector":{"matchLabels":{"app":"nginx"}}`,
				`"selector":{},"strategy":{"type":"Recreate"}`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(StrategicMergePatch, []byte(deployment), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, got, tt.want)
		})
	}
}

func TestStrategicMergeOtherKinds(t *testing.T) {
	tests := []struct {
		name     string
		original string
		patch    string
		want     string
	}{
		{
			name:     "service ports merged by port",
			original: `{"kind":"Service","spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":8080},{"name":"https","port":443,"targetPort":8443}]}}`,
			patch:    `{"spec":{"ports":[{"port":443,"targetPort":9443},{"name":"metrics","port":9100}]}}`,
			want:     `{"kind":"Service","spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":8080},{"name":"https","port":443,"targetPort":9443},{"name":"metrics","port":9100}]}}`,
		},
		{
			name:     "service port deleted by port",
			original: `{"spec":{"ports":[{"port":80},{"port":443}]}}`,
			patch:    `{"spec":{"ports":[{"port":80,"$patch":"delete"}]}}`,
			want:     `{"spec":{"ports":[{"port":443}]}}`,
		},
		{
			name:     "merge key numbers compare by value",
			original: `{"spec":{"ports":[{"port":80,"name":"a"}]}}`,
			patch:    `{"spec":{"ports":[{"port":80.0,"name":"b"}]}}`,
			want:     `{"spec":{"ports":[{"port":80,"name":"b"}]}}`,
		},
		{
			name:     "pod containers and initContainers by name at spec",
			original: `{"kind":"Pod","spec":{"initContainers":[{"name":"init","image":"a"}],"containers":[{"name":"c","image":"a","ports":[{"containerPort":80}]}]}}`,
			patch:    `{"spec":{"initContainers":[{"name":"init","image":"b"}],"containers":[{"name":"c","ports":[{"containerPort":81}]}]}}`,
			want:     `{"kind":"Pod","spec":{"initContainers":[{"name":"init","image":"b"}],"containers":[{"name":"c","image":"a","ports":[{"containerPort":80},{"containerPort":81}]}]}}`,
		},
		{
			name:     "status conditions by type",
			original: `{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False"}]}}`,
			patch:    `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"Initialized","status":"True"}]}}`,
			want:     `{"status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"},{"type":"Initialized","status":"True"}]}}`,
		},
		{
			name:     "ownerReferences by uid",
			original: `{"metadata":{"ownerReferences":[{"uid":"1","kind":"ReplicaSet","name":"a","controller":true}]}}`,
			patch:    `{"metadata":{"ownerReferences":[{"uid":"1","blockOwnerDeletion":true},{"uid":"2","kind":"Service","name":"b"}]}}`,
			want:     `{"metadata":{"ownerReferences":[{"uid":"1","kind":"ReplicaSet","name":"a","controller":true,"blockOwnerDeletion":true},{"uid":"2","kind":"Service","name":"b"}]}}`,
		},
		{
			name:     "node addresses by type and podCIDRs as a set",
			original: `{"spec":{"podCIDRs":["10.244.1.0/24"]},"status":{"addresses":[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"192.0.2.1"}]}}`,
			patch:    `{"spec":{"podCIDRs":["10.244.1.0/24","fd00::/64"]},"status":{"addresses":[{"type":"InternalIP","address":"192.0.2.2"}]}}`,
			want:     `{"spec":{"podCIDRs":["10.244.1.0/24","fd00::/64"]},"status":{"addresses":[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"192.0.2.2"}]}}`,
		},
		{
			name:     "keyed list missing from the original is built",
			original: `{"metadata":{"name":"x"}}`,
			patch:    `{"spec":{"ports":[{"port":53,"protocol":"UDP","nodePort":null}]}}`,
			want:     `{"metadata":{"name":"x"},"spec":{"ports":[{"port":53,"protocol":"UDP"}]}}`,
		},
		{
			name:     "a value of another kind is replaced",
			original: `{"spec":{"ports":"oops","selector":["x"]}}`,
			patch:    `{"spec":{"ports":[{"port":1}],"selector":{"app":"a"}}}`,
			want:     `{"spec":{"ports":[{"port":1}],"selector":{"app":"a"}}}`,
		},
		{
			name:     "same path outside the table's kinds is atomic",
			original: `{"ports":[{"port":1}],"endpoints":[{"addresses":["10.0.0.1"]}]}`,
			patch:    `{"ports":[{"port":2}],"endpoints":[{"addresses":["10.0.0.2"]}]}`,
			want:     `{"ports":[{"port":2}],"endpoints":[{"addresses":["10.0.0.2"]}]}`,
		},
		{
			name:     "$setElementOrder names elements by merge key and leaves others in place",
			original: `{"spec":{"ports":[{"port":1},{"port":2},{"port":3}]}}`,
			patch:    `{"spec":{"$setElementOrder/ports":[{"port":3},{"port":1}]}}`,
			want:     `{"spec":{"ports":[{"port":3},{"port":2},{"port":1}]}}`,
		},
		{
			name:     "$deleteFromPrimitiveList on a field that is not a list does nothing",
			original: `{"metadata":{"finalizers":"a"}}`,
			patch:    `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}}`,
			want:     `{"metadata":{"finalizers":"a"}}`,
		},
		{
			name:     "whole-document $patch: delete",
			original: `{"a":1}`,
			patch:    `{"$patch":"delete"}`,
			want:     `{}`,
		},
		{
			name:     "whole-document $patch: replace",
			original: `{"a":1,"b":{"c":2}}`,
			patch:    `{"$patch":"replace","b":{"d":3}}`,
			want:     `{"b":{"d":3}}`,
		},
		{
			name:     "primitive set replaced with $patch: replace",
			original: `{"metadata":{"finalizers":["a","b"]}}`,
			patch:    `{"metadata":{"finalizers":[{"$patch":"replace"},"c"]}}`,
			want:     `{"metadata":{"finalizers":["c"]}}`,
		},
		{
			name:     "duplicate keys in the patch merge into one element",
			original: `{"spec":{"containers":[]}}`,
			patch:    `{"spec":{"containers":[{"name":"a","image":"x"},{"name":"a","args":["y"]}]}}`,
			want:     `{"spec":{"containers":[{"name":"a","image":"x","args":["y"]}]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(StrategicMergePatch, []byte(tt.original), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, got, tt.want)
		})
	}
}

func TestStrategicMergeErrors(t *testing.T) {
	tests := []struct {
		name      string
		original  string
		patch     string
		wantInMsg string
	}{
		{name: "unknown $patch on a map", original: `{}`, patch: `{"spec":{"$patch":"merge"}}`,
			wantInMsg: `spec: unknown $patch directive "merge"`},
		{name: "$patch that is not a string", original: `{}`, patch: `{"$patch":1}`,
			wantInMsg: `unknown $patch directive a number`},
		{name: "unknown directive", original: `{}`, patch: `{"metadata":{"$frob":1}}`,
			wantInMsg: `metadata: unknown directive "$frob"`},
		{name: "element without merge key",
			original: `{"spec":{"containers":[{"name":"a"}]}}`, patch: `{"spec":{"containers":[{"image":"x"}]}}`,
			wantInMsg: `spec.containers[0]: missing the merge key "name"`},
		{name: "nested element without merge key names its path",
			original:  `{}`,
			patch:     `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","ports":[{"containerPort":1},{"name":"x"}]}]}}}}`,
			wantInMsg: `spec.template.spec.containers[1].ports[1]: missing the merge key "containerPort"`},
		{name: "$patch: delete without merge key",
			original: `{}`, patch: `{"spec":{"ports":[{"$patch":"delete"}]}}`,
			wantInMsg: `$patch: delete needs the merge key "port"`},
		{name: "unknown directive on a list element",
			original: `{}`, patch: `{"spec":{"ports":[{"port":1,"$patch":"frob"}]}}`,
			wantInMsg: `spec.ports[0]: unknown $patch directive "frob"`},
		{name: "non-object element in a keyed list",
			original: `{}`, patch: `{"spec":{"containers":["nginx"]}}`,
			wantInMsg: `spec.containers[0]: list is merged by key "name", found a string`},
		{name: "object merge key",
			original: `{}`, patch: `{"spec":{"containers":[{"name":{"x":1}}]}}`,
			wantInMsg: `spec.containers[0].name: merge key must be a string, number or boolean`},
		{name: "object in a primitive set",
			original: `{}`, patch: `{"metadata":{"finalizers":[{"a":1}]}}`,
			wantInMsg: `metadata.finalizers[0]: list is merged as a set`},
		{name: "$deleteFromPrimitiveList not a list",
			original: `{}`, patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}`,
			wantInMsg: `must be a list`},
		{name: "$setElementOrder without merge keys",
			original: `{}`, patch: `{"spec":{"$setElementOrder/containers":[{"image":"x"}]}}`,
			wantInMsg: `must list objects with the merge key "name"`},
		{name: "$setElementOrder naming no field",
			original: `{}`, patch: `{"$setElementOrder/":[]}`,
			wantInMsg: `names no field`},
		{name: "$retainKeys not listing a patched field",
			original: `{}`, patch: `{"spec":{"$retainKeys":["a"],"b":1}}`,
			wantInMsg: `spec.b: field is set by the patch but not listed in $retainKeys`},
		{name: "$retainKeys not a list",
			original: `{}`, patch: `{"$retainKeys":"a"}`,
			wantInMsg: `$retainKeys must be a list of field names`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Apply(StrategicMergePatch, []byte(tt.original), []byte(tt.patch))
			checkErr(t, err, ErrInvalidPatch)
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantInMsg)
			}
		})
	}
}

// TestStrategicMergeWithoutListsIsMergePatch checks that on documents and
// patches with no lists and no directives the two merge flavours agree.
func TestStrategicMergeWithoutListsIsMergePatch(t *testing.T) {
	tests := []struct {
		name, original, patch string
	}{
		{name: "labels", original: `{"metadata":{"labels":{"a":"1","b":"2"}}}`, patch: `{"metadata":{"labels":{"a":null,"c":"3"}}}`},
		{name: "nested create", original: `{}`, patch: `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","x":null}}}}`},
		{name: "type change", original: `{"a":{"b":1}}`, patch: `{"a":"s","c":{"d":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merge, err := Apply(MergePatch, []byte(tt.original), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			smp, err := Apply(StrategicMergePatch, []byte(tt.original), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, smp, string(merge))
		})
	}
}

func TestMergeKeyTable(t *testing.T) {
	tests := []struct {
		path string
		want listStrategy
		ok   bool
	}{
		{path: "spec.containers", want: listStrategy{mergeKey: "name"}, ok: true},
		{path: "spec.template.spec.containers", want: listStrategy{mergeKey: "name"}, ok: true},
		{path: "spec.template.spec.initContainers[].env", want: listStrategy{mergeKey: "name"}, ok: true},
		{path: "spec.template.spec.containers[].ports", want: listStrategy{mergeKey: "containerPort"}, ok: true},
		{path: "spec.containers[].volumeMounts", want: listStrategy{mergeKey: "mountPath"}, ok: true},
		{path: "spec.volumes", want: listStrategy{mergeKey: "name"}, ok: true},
		{path: "spec.ports", want: listStrategy{mergeKey: "port"}, ok: true},
		{path: "metadata.ownerReferences", want: listStrategy{mergeKey: "uid"}, ok: true},
		{path: "metadata.finalizers", want: listStrategy{set: true}, ok: true},
		{path: "status.conditions", want: listStrategy{mergeKey: "type"}, ok: true},
		{path: "spec.tolerations", ok: false},
		{path: "spec.template.spec.containers[].args", ok: false},
		{path: "spec.template.spec.containers.ports", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := mergeKeys[tt.path]
			if got != tt.want || ok != tt.ok {
				t.Fatalf("mergeKeys[%q] = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
}
