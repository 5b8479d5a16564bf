package server_test

// Benchmarks of the whole control plane: a real server, real bbolt file
// with fsync on, real HTTPS on 127.0.0.1, clients in the same process
// (so they share the machine's cores with the server). Each op is a fixed
// workload, so -benchtime=1x already gives a meaningful figure:
//
//	go test -run '^$' -bench 'ServiceCreate16|WatchLatency100' -benchtime 1x ./server/
//	go test -run '^$' -bench List10kPods -benchtime 20x ./server/
//	go test -run '^$' -bench StartToReady -benchtime 5x ./server/
//	go test -run 'TestIdleRSS' -v ./server/

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

// startConfig is the configuration of a benchmark of server.Start itself:
// dataDir, a loopback port of the kernel's choosing, no agent, fsync on.
func startConfig(dataDir string) config.Server {
	cfg := config.ServerDefaults()
	cfg.DataDir = dataDir
	cfg.Listen = "127.0.0.1:0"
	cfg.DisableAgent = true
	return cfg
}

// percentile of sorted durations, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// newClients makes n admin clients, each with its own connection.
func newClients(b testing.TB, ts *servertest.Server, n int) []*client.Client {
	out := make([]*client.Client, n)
	for i := range out {
		out[i] = clientWith(b, ts, ts.Bundle().AdminToken)
	}
	return out
}

// startFloor is the floor of BenchmarkStartToReady (see there): the time
// from nothing to a new client's first 200 from /readyz over TLS, with a
// key, a certificate and an fsynced bbolt file made on the way.
func startFloor(b *testing.B) time.Duration {
	b.Helper()
	dir := b.TempDir()
	t0 := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "floor"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("floor"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("k"), []byte("v"))
	}); err != nil {
		b.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("https://" + ln.Addr().String() + "/readyz")
	if err != nil {
		b.Fatalf("floor: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("floor: /readyz %d", resp.StatusCode)
	}
	return time.Since(t0)
}

// BenchmarkServiceCreate16: 16 concurrent HTTPS clients create ClusterIP
// Services (each create allocates an IP and writes the Service and its
// IPAddress in one fsynced transaction). One op is 2,000 creates.
//
// Its floor, in the same run, after each op (createFloor): the same
// number of Service and IPAddress values written straight to a bbolt file
// with fsync on, beside the server's, in transactions of 16 creates each
// (as if every commit took all 16 clients' writes at once), one after
// another: the disk's and bbolt's share, without HTTPS, the API server or
// the store's commit loop. Reports floor-creates/s and over-floor (the
// creates' time over the floor's).
func BenchmarkServiceCreate16(b *testing.B) {
	const (
		workers = 16
		perOp   = 2000
	)
	ts := servertest.Start(b, servertest.Options{Sync: true})
	mustCreateNS(b, ts.Client(), "bench")
	clients := newClients(b, ts, workers)
	// Warm the connections (TLS handshakes are not what is measured).
	for i, c := range clients {
		if err := c.Create(context.Background(), resServices, "bench", service(fmt.Sprintf("warm-%d", i), api.ServiceTypeClusterIP, 80)); err != nil {
			b.Fatal(err)
		}
	}
	var (
		lat     []time.Duration
		elapsed time.Duration
		floor   time.Duration
		seq     atomic.Int64
	)
	b.ResetTimer()
	for range b.N {
		var next atomic.Int64
		lats := make([][]time.Duration, workers)
		var wg sync.WaitGroup
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= perOp {
					s := service(fmt.Sprintf("svc-%d", seq.Add(1)), api.ServiceTypeClusterIP, 80)
					t0 := time.Now()
					if err := clients[w].Create(context.Background(), resServices, "bench", s); err != nil {
						b.Error(err)
						return
					}
					lats[w] = append(lats[w], time.Since(t0))
				}
			}()
		}
		wg.Wait()
		elapsed += time.Since(start)
		for _, l := range lats {
			lat = append(lat, l...)
		}
		b.StopTimer()
		floor += createFloor(b, perOp, workers)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(perOp*b.N)/floor.Seconds(), "floor-creates/s")
	b.ReportMetric(float64(elapsed)/float64(floor), "over-floor")
	b.ReportMetric(percentile(lat, 50), "p50-ms")
	b.ReportMetric(percentile(lat, 99), "p99-ms")
}

// createFloor writes n creates' values (a Service as the API stores it
// and an IPAddress-sized value) to a fresh bbolt file with fsync on, perTx
// creates to a transaction, and returns the time it took.
func createFloor(b *testing.B, n, perTx int) time.Duration {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc, err := json.Marshal(service("svc-00000", api.ServiceTypeClusterIP, 80))
	if err != nil {
		b.Fatal(err)
	}
	ip := bytes.Repeat([]byte("i"), 400)
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{"services", "ipaddresses"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i += perTx {
		if err := db.Update(func(tx *bolt.Tx) error {
			for k := i; k < min(i+perTx, n); k++ {
				key := fmt.Appendf(nil, "bench/svc-%05d", k)
				if err := tx.Bucket([]byte("services")).Put(key, svc); err != nil {
					return err
				}
				if err := tx.Bucket([]byte("ipaddresses")).Put(key, ip); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkWatchLatency100: 100 watchers (each its own HTTPS connection)
// watch Services; a writer creates one Service at a time and waits until
// every watcher has it. Latency is measured per watcher and event, from
// the moment the writer got its 201 (clamped at 0: an event may arrive
// before the 201 does) and, as an upper bound, from the moment the write
// was sent. One op is 100 writes, so 10,000 deliveries.
//
// Its floor, in the same run, after the writes (watchFloor): the same
// number of events, each a watch event of a Service as the server sends
// it, pushed by a bare net/http TLS server (HTTP/2) to 100 clients, each
// on a connection of its own, reading and decoding as a watcher does,
// timed from the push to each receipt: the fan-out's share, without the
// store, the commit and the watch cache. Reports floor-p50-ms,
// floor-p99-ms and p99-from-send-over-floor.
func BenchmarkWatchLatency100(b *testing.B) {
	const (
		watchers = 100
		perOp    = 100
	)
	ts := servertest.Start(b, servertest.Options{Sync: true})
	mustCreateNS(b, ts.Client(), "bench")
	var l api.ServiceList
	if err := ts.Client().List(context.Background(), resServices, "bench", client.ListOptions{}, &l); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type delivery struct {
		seq int
		at  time.Time
	}
	got := make(chan delivery, watchers*4)
	var ready sync.WaitGroup
	for range watchers {
		c := clientWith(b, ts, ts.Bundle().AdminToken)
		w, err := c.Watch(ctx, resServices, "bench", client.ListOptions{ResourceVersion: l.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		ready.Add(1)
		go func() {
			ready.Done()
			for ev := range w.ResultChan() {
				at := time.Now()
				if ev.Type != client.EventAdded {
					continue
				}
				var m struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				}
				if err := json.Unmarshal(ev.Object, &m); err != nil {
					b.Error(err)
					return
				}
				var n int
				if _, err := fmt.Sscanf(m.Metadata.Name, "w-%d", &n); err != nil {
					continue
				}
				got <- delivery{n, at}
			}
		}()
	}
	ready.Wait()
	writer := clientWith(b, ts, ts.Bundle().AdminToken)
	var from201, fromSend []time.Duration
	seq := 0
	b.ResetTimer()
	for range b.N {
		for range perOp {
			seq++
			s := service(fmt.Sprintf("w-%d", seq), api.ServiceTypeClusterIP, 80)
			sent := time.Now()
			if err := writer.Create(ctx, resServices, "bench", s); err != nil {
				b.Fatal(err)
			}
			acked := time.Now()
			timeout := time.After(10 * time.Second)
			for n := 0; n < watchers; n++ {
				select {
				case d := <-got:
					if d.seq != seq {
						b.Fatalf("watcher got w-%d while waiting for w-%d", d.seq, seq)
					}
					from201 = append(from201, max(0, d.at.Sub(acked)))
					fromSend = append(fromSend, d.at.Sub(sent))
				case <-timeout:
					b.Fatalf("only %d of %d watchers got w-%d", n, watchers, seq)
				}
			}
		}
	}
	b.StopTimer()
	slices.Sort(from201)
	slices.Sort(fromSend)
	b.ReportMetric(percentile(from201, 50), "p50-ms")
	b.ReportMetric(percentile(from201, 99), "p99-ms")
	b.ReportMetric(percentile(fromSend, 99), "p99-from-send-ms")
	floor := watchFloor(b, watchers, perOp*b.N)
	b.ReportMetric(percentile(floor, 50), "floor-p50-ms")
	b.ReportMetric(percentile(floor, 99), "floor-p99-ms")
	// From the send, not from the 201: an event can reach a watcher
	// before the writer has its 201, so the fan-out is only partly in
	// the figure from the 201, and wholly in the one from the send.
	if f := percentile(floor, 99); f > 0 {
		b.ReportMetric(percentile(fromSend, 99)/f, "p99-from-send-over-floor")
	}
}

// watchFloor pushes events (a Service's ADDED event) one at a time from a
// bare TLS server to watchers clients, each on its own connection, and
// returns every delivery's time from the push, sorted.
func watchFloor(b *testing.B, watchers, events int) []time.Duration {
	b.Helper()
	obj, err := json.Marshal(service("w-00000", api.ServiceTypeClusterIP, 80))
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var subs []chan []byte
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch := make(chan []byte, 4)
		mu.Lock()
		subs = append(subs, ch)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-ch:
				_, _ = w.Write(m)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	type delivery struct {
		seq int
		at  time.Time
	}
	got := make(chan delivery, watchers*4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done sync.WaitGroup
	defer done.Wait()
	defer cancel()
	for range watchers {
		tr := srv.Client().Transport.(*http.Transport).Clone() // a connection of its own
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			b.Fatalf("floor: %v", err)
		}
		done.Go(func() {
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			for {
				var ev struct {
					Type   string          `json:"type"`
					Object json.RawMessage `json:"object"`
					Seq    int             `json:"seq"`
				}
				if err := dec.Decode(&ev); err != nil {
					return
				}
				at := time.Now()
				var m struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				}
				if err := json.Unmarshal(ev.Object, &m); err != nil {
					b.Error(err)
					return
				}
				got <- delivery{ev.Seq, at}
			}
		})
	}
	for {
		mu.Lock()
		n := len(subs)
		mu.Unlock()
		if n == watchers {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var lat []time.Duration
	for seq := 1; seq <= events; seq++ {
		msg := fmt.Appendf(nil, `{"type":"ADDED","seq":%d,"object":%s}`+"\n", seq, obj)
		pushed := time.Now()
		for _, ch := range subs {
			ch <- msg
		}
		timeout := time.After(10 * time.Second)
		for n := 0; n < watchers; n++ {
			select {
			case d := <-got:
				if d.seq != seq {
					b.Fatalf("floor: a watcher got event %d while waiting for %d", d.seq, seq)
				}
				lat = append(lat, d.at.Sub(pushed))
			case <-timeout:
				b.Fatalf("floor: only %d of %d watchers got event %d", n, watchers, seq)
			}
		}
	}
	slices.Sort(lat)
	return lat
}

// podJSON is a realistic pod of about 1 KB once stored with its defaults
// (a Deployment's pod: labels, owner reference, one container with a
// port, resources and a readiness probe, a node).
const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7d9f8b6c5d-%05d",
"labels":{"app":"web","pod-template-hash":"7d9f8b6c5d"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9f8b6c5d","uid":"0b7a4c1e-5a4e-4f7e-9d2b-3c1f8e6a7b90","controller":true,"blockOwnerDeletion":true}]},
"spec":{"nodeName":"node-%d","containers":[{"name":"web","image":"registry.example.com/team/web:v1.4.2",
"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},
"readinessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":5}}]}}`

// list10k is the server the list benchmark fills once per process: 10,000
// pods are too slow to create for every b.N round.
var list10k struct {
	once sync.Once
	ts   *servertest.Server
	err  error
}

// BenchmarkList10kPods: GET /api/v1/pods with 10,000 ~1 KB pods stored,
// the whole body read (not decoded) by the client. One op is one list.
//
// Its floor, in the same run, each list followed by one: the very body
// the server sent, served from memory by a bare net/http TLS server on
// 127.0.0.1 (HTTP/2, as the server) and read by a client of the same
// kind: the transport's share, without the store, authorization and
// list building. Reports floor-ms (mean) and over-floor (the list's mean
// time over it).
func BenchmarkList10kPods(b *testing.B) {
	const pods = 10000
	list10k.once.Do(func() {
		// The server outlives this b (b.N rounds rerun the function):
		// TestMain closes it.
		ts, err := servertest.New(context.Background(), servertest.Options{Sync: true})
		if err != nil {
			list10k.err = err
			return
		}
		list10k.ts = ts
		afterTests = append(afterTests, func() {
			if err := ts.Close(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		})
		s := ts.Server()
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		for range 16 {
			cl, _ := s.Client()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1)
					if i > pods {
						return
					}
					body := fmt.Sprintf(podJSON, i, i%50)
					if err := cl.Do(context.Background(), "POST", "/api/v1/namespaces/default/pods", []byte(body), nil); err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			list10k.err = err
		}
	})
	if list10k.err != nil {
		b.Fatal(list10k.err)
	}
	ts := list10k.ts
	hc := httpClient(b, ts.Bundle().CACertPEM)
	getFrom := func(hc *http.Client, url string, w io.Writer) int64 {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+ts.Bundle().AdminToken)
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(w, resp.Body)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("list: %d %v", resp.StatusCode, err)
		}
		return n
	}
	get := func() int64 { return getFrom(hc, ts.URL()+"/api/v1/pods", io.Discard) }
	// Check the count once, and warm the connection.
	var l client.RawList
	if err := ts.Client().List(context.Background(), resPods, "", client.ListOptions{}, &l); err != nil {
		b.Fatal(err)
	}
	if len(l.Items) != pods {
		b.Fatalf("%d pods stored, want %d", len(l.Items), pods)
	}
	var body bytes.Buffer
	size := getFrom(hc, ts.URL()+"/api/v1/pods", &body)
	floorSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body.Bytes())
	}))
	floorSrv.EnableHTTP2 = true
	floorSrv.StartTLS()
	defer floorSrv.Close()
	floorHC := floorSrv.Client()
	if n := getFrom(floorHC, floorSrv.URL, io.Discard); n != size { // and warm the connection
		b.Fatalf("floor: %d bytes, want the list's %d", n, size)
	}
	var floor time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		get()
		b.StopTimer()
		t0 := time.Now()
		getFrom(floorHC, floorSrv.URL, io.Discard)
		floor += time.Since(t0)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(size)/pods, "bytes/pod")
	b.ReportMetric(float64(floor.Microseconds())/1000/float64(b.N), "floor-ms")
	b.ReportMetric(float64(b.Elapsed())/float64(floor), "over-floor")
}

// BenchmarkStartToReady: from the server.Start call to /readyz answering
// 200, on a fresh data dir (CA, keys, tokens and bootstrap objects are
// made) and on a restart over a data dir holding 1,000 Services (repair
// pass over them). One op is one start (ns/op is the mean); Stop is not
// timed.
//
// Its floor, after each start (startFloor, untimed): what any such start
// does at the least, with no server: a P-256 key and a certificate made,
// a fresh bbolt file opened and one fsynced transaction committed, a TLS
// listener on 127.0.0.1 and a new client's GET of /readyz answered.
// Reports floor-ms (mean) and over-floor (the mean start over it).
func BenchmarkStartToReady(b *testing.B) {
	var worst, total, floor time.Duration
	report := func(b *testing.B) {
		b.ReportMetric(float64(worst)/float64(time.Millisecond), "max-ms-to-ready")
		b.ReportMetric(float64(floor.Microseconds())/1000/float64(b.N), "floor-ms")
		if floor > 0 {
			b.ReportMetric(float64(total)/float64(floor), "over-floor")
		}
		worst, total, floor = 0, 0, 0
	}
	measure := func(b *testing.B, cfg config.Server) {
		t0 := time.Now()
		s, err := server.Start(context.Background(), cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		hc := httpClient(b, s.Bundle().CACertPEM)
		for {
			resp, err := hc.Get(s.URL() + "/readyz")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Since(t0) > 30*time.Second {
				b.Fatal("not ready after 30s")
			}
			time.Sleep(time.Millisecond)
		}
		d := time.Since(t0)
		b.StopTimer()
		hc.CloseIdleConnections()
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		floor += startFloor(b)
		b.StartTimer()
		worst = max(worst, d)
		total += d
	}
	b.Run("fresh", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			cfg := startConfig(b.TempDir())
			b.StartTimer()
			measure(b, cfg)
		}
		report(b)
	})
	b.Run("restart-1000-services", func(b *testing.B) {
		ts := servertest.Start(b, servertest.Options{Sync: true})
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1); i <= 1000; i = next.Add(1) {
					if err := ts.Client().Create(context.Background(), resServices, "default", service(fmt.Sprintf("s-%d", i), api.ServiceTypeNodePort, 80)); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		ts.Stop()
		cfg := startConfig(ts.DataDir())
		b.ResetTimer()
		for range b.N {
			measure(b, cfg)
		}
		report(b)
	})
}
