package deployment

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// safeAlphabet is Kubernetes' rand.SafeEncodeString alphabet: no vowels (no
// words) and no 0, 1, 3 (no confusable characters).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// TemplateHash is the pod-template-hash of a pod template: the 32-bit FNV-1a
// hash of the template's JSON encoding, printed in decimal and rendered
// digit by digit in the safe alphabet, as Kubernetes' ComputeHash renders
// its (spew-based) hash. encoding/json writes struct fields in declaration
// order and map keys sorted, so equal templates always hash alike.
func TemplateHash(t *api.PodTemplateSpec) string {
	h := fnv.New32a()
	b, err := json.Marshal(t)
	if err != nil {
		// The API types always encode; fall back to Go syntax so that a
		// hash is still a pure function of the template.
		b = fmt.Appendf(nil, "%#v", *t)
	}
	h.Write(b)
	return safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// safeEncode maps each byte of s into safeAlphabet, as SafeEncodeString.
func safeEncode(s string) string {
	out := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(out)
}

// maxGeneratedNameLength is the longest generateName prefix Kubernetes
// keeps (63 minus the 5-character random suffix).
const maxGeneratedNameLength = 58

// replicaSetName is the name of the virtual replica set of one template
// hash, "<deployment>-<hash>": the prefix of its pods' names, and the name
// events and conditions use where Kubernetes names a ReplicaSet.
func replicaSetName(deploy, hash string) string { return deploy + "-" + hash }

// groupName names a group of pods in Events: its replica set name, or
// for adopted pods without the label, "<deployment> (no pod-template-hash)".
func groupName(deploy, hash string) string {
	if hash == "" {
		return deploy + " (no " + LabelPodTemplateHash + ")"
	}
	return replicaSetName(deploy, hash)
}

// podNamePrefix is the generateName of the pods of one template hash,
// truncated as Kubernetes truncates generated names.
func podNamePrefix(deploy, hash string) string {
	p := replicaSetName(deploy, hash) + "-"
	if len(p) > maxGeneratedNameLength {
		p = p[:maxGeneratedNameLength]
	}
	return p
}
