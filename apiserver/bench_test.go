package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/skiff-dev/skiff/store"
)

// BenchmarkCreateParallel: 16 concurrent HTTPS clients creating pods on the
// bbolt store. "nosync" measures the server and the store without the disk's
// flush; "fsync" is the production setting (every acknowledged create is
// fsynced, group-committed), where the target is >= 3000 creates/s.
func BenchmarkCreateParallel(b *testing.B) {
	for _, bc := range []struct {
		name   string
		noSync bool
	}{
		{"nosync", true},
		{"fsync", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bo := testBoltOptions()
			bo.NoSync = bc.noSync
			benchCreateParallel(b, newEnvWithStore(b, bo))
		})
	}
}

func benchCreateParallel(b *testing.B, e *testEnv) {
	const clients = 16
	b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var n atomic.Int64
	url := e.srv.URL + "/api/v1/namespaces/default/pods"
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-%d","labels":{"app":"bench"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, i)
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testToken)
			res, err := e.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 201 {
				b.Errorf("code %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkList10k lists 10,000 pods of about 1 KiB each over HTTPS from the
// bbolt store (fsync off: only the load is written).
func BenchmarkList10k(b *testing.B) {
	e := newEnv(b)
	_, err := e.store.Update(b.Context(), func(tx store.Txn) error {
		for i := 0; i < 10000; i++ {
			p := &pod{}
			p.Name, p.Namespace = fmt.Sprintf("pod-%05d", i), "default"
			p.Labels = map[string]string{"app": fmt.Sprintf("app-%d", i%10), "tier": "backend"}
			p.Annotations = map[string]string{"note": string(bytes.Repeat([]byte("x"), 600))}
			p.Spec.NodeName = fmt.Sprintf("node-%d", i%5)
			p.Spec.Containers = append(p.Spec.Containers, struct {
				Name  string `json:"name"`
				Image string `json:"image,omitempty"`
			}{"main", "registry.example/app:1.0"})
			p.Status.Phase = "Running"
			if err := e.s.PutObject(tx, podInfo, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, query string }{
		{"all", ""},
		{"labelSelector", "?labelSelector=app%3Dapp-3"},
		{"fieldSelector", "?fieldSelector=spec.nodeName%3Dnode-1"},
		{"limit500", "?limit=500"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			url := e.srv.URL + "/api/v1/namespaces/default/pods" + bc.query
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				res, err := e.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				size, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("code %d", res.StatusCode)
				}
			}
			b.ReportMetric(float64(size), "bytes/list")
		})
	}
}
