package deployment

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// safeAlphabet is Kubernetes' rand.SafeEncodeString alphabet: no vowels (no
// words) and no 0, 1, 3 (no confusable characters).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// ComputeHash is the pod-template-hash of a Deployment's template, as
// Kubernetes' controller.ComputeHash: the 32-bit FNV-1a hash of the
// template (here its JSON encoding, where upstream uses a spew dump), then,
// when collisionCount is set, 8 bytes holding its value as a little-endian
// uint32 written into the same hash; the sum is printed in decimal and rendered in the
// safe alphabet (rand.SafeEncodeString). encoding/json writes struct
// fields in declaration order and map keys sorted, so equal templates
// always hash alike.
func ComputeHash(t *api.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	b, err := json.Marshal(t)
	if err != nil {
		// The API types always encode; fall back to Go syntax so that a
		// hash is still a pure function of the template.
		b = fmt.Appendf(nil, "%#v", *t)
	}
	h.Write(b)
	if collisionCount != nil {
		var buf [8]byte // upstream writes 8 bytes, the count in the first 4
		binary.LittleEndian.PutUint32(buf[:], uint32(*collisionCount))
		h.Write(buf[:])
	}
	return safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// TemplateHash is ComputeHash without a collision count: the hash the
// pods of earlier Skiff versions (which had no ReplicaSets) carry.
func TemplateHash(t *api.PodTemplateSpec) string { return ComputeHash(t, nil) }

// safeEncode maps each byte of s into safeAlphabet, as SafeEncodeString.
func safeEncode(s string) string {
	out := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(out)
}

// replicaSetName is the name of the ReplicaSet of one template hash,
// "<deployment>-<hash>", as upstream names it.
func replicaSetName(deploy, hash string) string { return deploy + "-" + hash }
