package encrypt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// secretJSON is a Secret as the API server stores it, about 1 KiB.
var secretJSON = []byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"db","namespace":"default","uid":"6c1c2a8e-7d6b-4f0e-9a49-0f1c0e6f2b11","resourceVersion":"12","creationTimestamp":"2026-12-02T06:50:00Z"},"data":{"password":"` +
	strings.Repeat("c2VjcmV0", 120) + `"},"type":"Opaque"}`)

// BenchmarkSecret is the cost of a Secret's create and get with and
// without encryption, on a bbolt file without fsync (so that the
// encryption's share shows): docs/performance.md.
func BenchmarkSecret(b *testing.B) {
	for _, on := range []bool{false, true} {
		mode := "plain"
		if on {
			mode = "aesgcm"
		}
		b.Run("create/"+mode, func(b *testing.B) {
			s := benchStore(b, on)
			ctx := context.Background()
			b.SetBytes(int64(len(secretJSON)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprintf("%sdefault/s%d", secrets, i)
				if _, err := s.Update(ctx, func(tx store.Txn) error { return tx.Put(key, secretJSON) }); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get/"+mode, func(b *testing.B) {
			s := benchStore(b, on)
			ctx := context.Background()
			key := secrets + "default/db"
			if _, err := s.Update(ctx, func(tx store.Txn) error { return tx.Put(key, secretJSON) }); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(secretJSON)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(ctx, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchStore(b *testing.B, on bool) store.Interface {
	bolt := storetest.MustOpenBolt(b)
	if !on {
		return bolt
	}
	return wrap(b, bolt, newKeys(b), true)
}
