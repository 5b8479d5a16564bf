package pki

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is the fixed clock of the tests that do not talk TLS.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func clock(t time.Time) func() time.Time { return func() time.Time { return t } }

// allFiles lists every file Ensure writes, relative to the data dir.
var allFiles = []string{
	CACertFile, CAKeyFile, ServerCertFile, ServerKeyFile,
	AdminTokenFile, NodeTokenFile, DashboardTokenFile, KubeconfigFile,
}

// snapshot reads every file Ensure writes; all must exist.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := snapshotSome(t, dir)
	for _, f := range allFiles {
		if out[f] == nil {
			t.Fatalf("%s missing", f)
		}
	}
	return out
}

// snapshotSome reads the files Ensure writes that exist; missing ones map
// to nil.
func snapshotSome(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range allFiles {
		b, ok, err := readOptional(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out[f] = b
		}
	}
	return out
}

func mustEnsure(t *testing.T, dir string, opts Options) *Bundle {
	t.Helper()
	b, err := Ensure(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return b
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCert(b)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return c
}

func TestEnsureFirstStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	b := mustEnsure(t, dir, Options{
		SANs:   []string{"node1.example.com", "192.0.2.10", "2001:db8::10"},
		Server: "https://192.0.2.10:6443",
		Now:    clock(t0),
	})

	t.Run("modes", func(t *testing.T) {
		want := map[string]fs.FileMode{
			".":                dirMode,
			TLSDir:             dirMode,
			TokensDir:          dirMode,
			CACertFile:         publicMode,
			ServerCertFile:     publicMode,
			CAKeyFile:          secretMode,
			ServerKeyFile:      secretMode,
			AdminTokenFile:     secretMode,
			NodeTokenFile:      secretMode,
			DashboardTokenFile: secretMode,
			KubeconfigFile:     secretMode,
		}
		for f, mode := range want {
			st, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != mode {
				t.Errorf("%s: mode %v, want %v", f, st.Mode().Perm(), mode)
			}
		}
	})

	t.Run("no other files", func(t *testing.T) {
		var got []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(allFiles)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("files %v, want %v", got, want)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		toks := map[string]string{AdminTokenFile: b.AdminToken, NodeTokenFile: b.NodeToken, DashboardTokenFile: b.DashboardToken}
		seen := map[string]bool{}
		for f, tok := range toks {
			raw, err := hex.DecodeString(tok)
			if err != nil || len(raw) != 32 {
				t.Errorf("%s: %q is not 32 hex-encoded bytes", f, tok)
			}
			file, _ := os.ReadFile(filepath.Join(dir, f))
			if strings.TrimSpace(string(file)) != tok {
				t.Errorf("%s holds %q, bundle has %q", f, file, tok)
			}
			if seen[tok] {
				t.Errorf("token %s reused", f)
			}
			seen[tok] = true
		}
	})

	t.Run("CA", func(t *testing.T) {
		ca := readCert(t, filepath.Join(dir, CACertFile))
		if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Error("CA certificate cannot sign certificates")
		}
		if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
			t.Errorf("CA key is %T, want ECDSA P-256", ca.PublicKey)
		}
		if want := t0.AddDate(10, 0, 0); !ca.NotAfter.Equal(want) {
			t.Errorf("CA NotAfter %v, want %v", ca.NotAfter, want)
		}
		file, _ := os.ReadFile(filepath.Join(dir, CACertFile))
		if !bytes.Equal(file, b.CACertPEM) {
			t.Error("bundle CACertPEM differs from tls/ca.crt")
		}
	})

	t.Run("serving certificate", func(t *testing.T) {
		c := readCert(t, filepath.Join(dir, ServerCertFile))
		if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
			t.Errorf("serving key is %T, want ECDSA P-256", c.PublicKey)
		}
		if want := t0.Add(365 * 24 * time.Hour); !c.NotAfter.Equal(want) || !b.ServerCertNotAfter.Equal(want) {
			t.Errorf("NotAfter %v (bundle %v), want %v", c.NotAfter, b.ServerCertNotAfter, want)
		}
		if want := []string{"localhost", "node1.example.com"}; !slices.Equal(c.DNSNames, want) {
			t.Errorf("DNSNames %v, want %v", c.DNSNames, want)
		}
		var ips []string
		for _, ip := range c.IPAddresses {
			ips = append(ips, ip.String())
		}
		if want := []string{"127.0.0.1", "192.0.2.10", "::1", "2001:db8::10"}; !slices.Equal(ips, want) {
			t.Errorf("IPAddresses %v, want %v", ips, want)
		}
		if c.IsCA || !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
			t.Error("serving certificate is a CA or lacks serverAuth")
		}
		if b.ServerTLS.MinVersion < 0x0303 || len(b.ServerTLS.Certificates) != 1 {
			t.Errorf("ServerTLS: MinVersion %x, %d certificates", b.ServerTLS.MinVersion, len(b.ServerTLS.Certificates))
		}
	})

	t.Run("kubeconfig", func(t *testing.T) {
		if b.KubeconfigPath != filepath.Join(dir, KubeconfigFile) {
			t.Fatalf("KubeconfigPath %s", b.KubeconfigPath)
		}
		kc, err := LoadKubeconfig(b.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		want := Kubeconfig{Context: "skiff", Server: "https://192.0.2.10:6443", CAPEM: b.CACertPEM, Token: b.AdminToken, Namespace: "default"}
		if kc.Context != want.Context || kc.Server != want.Server || !bytes.Equal(kc.CAPEM, want.CAPEM) ||
			kc.Token != want.Token || kc.Namespace != want.Namespace || kc.InsecureSkipTLSVerify {
			t.Fatalf("kubeconfig %+v, want %+v", kc, want)
		}
	})
}

func TestEnsureRestartReusesEverything(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SANs: []string{"node1", "192.0.2.10"}, Now: clock(t0)}
	first := mustEnsure(t, dir, opts)
	before := snapshot(t, dir)

	// Restart later (but well before renewal), with the SANs in another
	// order and spelling, and one already a default.
	opts = Options{SANs: []string{"192.0.2.10", "NODE1.", "localhost"}, Now: clock(t0.AddDate(0, 6, 0))}
	second := mustEnsure(t, dir, opts)
	after := snapshot(t, dir)
	for _, f := range allFiles {
		if !bytes.Equal(before[f], after[f]) {
			t.Errorf("%s changed on restart", f)
		}
	}
	if first.AdminToken != second.AdminToken || first.NodeToken != second.NodeToken ||
		first.DashboardToken != second.DashboardToken || !bytes.Equal(first.CACertPEM, second.CACertPEM) {
		t.Error("bundle changed on restart")
	}
	if !bytes.Equal(first.ServerTLS.Certificates[0].Certificate[0], second.ServerTLS.Certificates[0].Certificate[0]) {
		t.Error("serving certificate in ServerTLS changed on restart")
	}
}

func TestEnsureReissuesServingCertOnly(t *testing.T) {
	base := Options{SANs: []string{"node1", "192.0.2.10"}, Now: clock(t0)}
	tests := []struct {
		name string
		// prepare changes the data dir after the first start and returns
		// the options of the second.
		prepare     func(t *testing.T, dir string) Options
		reissued    bool // server.crt must change (else must not)
		newKey      bool // server.key must change (else must not)
		wantSANs    []string
		wantExpires time.Time
	}{
		{
			name: "new --tls-san",
			prepare: func(t *testing.T, dir string) Options {
				o := base
				o.SANs = append(slices.Clone(base.SANs), "api.example.com")
				return o
			},
			reissued: true,
			wantSANs: []string{"api.example.com", "localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
		{
			name: "node address changed",
			prepare: func(t *testing.T, dir string) Options {
				o := base
				o.SANs = []string{"node1", "192.0.2.11"}
				return o
			},
			reissued: true,
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.11", "::1"},
		},
		{
			name: "SAN removed keeps the certificate",
			prepare: func(t *testing.T, dir string) Options {
				o := base
				o.SANs = []string{"node1"}
				return o
			},
			reissued: false,
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
		{
			name: "less than 30 days left",
			prepare: func(t *testing.T, dir string) Options {
				o := base
				o.Now = clock(t0.AddDate(0, 0, 340))
				return o
			},
			reissued:    true,
			wantSANs:    []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
			wantExpires: t0.AddDate(0, 0, 340).Add(365 * 24 * time.Hour),
		},
		{
			name: "31 days left keeps the certificate",
			prepare: func(t *testing.T, dir string) Options {
				o := base
				o.Now = clock(t0.AddDate(0, 0, 334))
				return o
			},
			reissued:    false,
			wantSANs:    []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
			wantExpires: t0.Add(365 * 24 * time.Hour),
		},
		{
			name: "serving certificate deleted",
			prepare: func(t *testing.T, dir string) Options {
				if err := os.Remove(filepath.Join(dir, ServerCertFile)); err != nil {
					t.Fatal(err)
				}
				return base
			},
			reissued: true,
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
		{
			name: "serving key deleted",
			prepare: func(t *testing.T, dir string) Options {
				if err := os.Remove(filepath.Join(dir, ServerKeyFile)); err != nil {
					t.Fatal(err)
				}
				return base
			},
			reissued: true,
			newKey:   true,
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
		{
			name: "serving certificate from another CA",
			prepare: func(t *testing.T, dir string) Options {
				other := t.TempDir()
				mustEnsure(t, other, base)
				b, err := os.ReadFile(filepath.Join(other, ServerCertFile))
				if err != nil {
					t.Fatal(err)
				}
				k, err := os.ReadFile(filepath.Join(other, ServerKeyFile))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ServerCertFile), b, publicMode); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ServerKeyFile), k, secretMode); err != nil {
					t.Fatal(err)
				}
				return base
			},
			reissued: true,
			newKey:   true, // the other dir's key, kept
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
		{
			name: "garbage serving certificate",
			prepare: func(t *testing.T, dir string) Options {
				if err := os.WriteFile(filepath.Join(dir, ServerCertFile), []byte("junk"), publicMode); err != nil {
					t.Fatal(err)
				}
				return base
			},
			reissued: true,
			wantSANs: []string{"localhost", "node1", "127.0.0.1", "192.0.2.10", "::1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first := mustEnsure(t, dir, base)
			before := snapshot(t, dir)
			opts := tt.prepare(t, dir)
			prepared := snapshotSome(t, dir)
			second := mustEnsure(t, dir, opts)
			after := snapshot(t, dir)

			for _, f := range []string{CACertFile, CAKeyFile, AdminTokenFile, NodeTokenFile, DashboardTokenFile, KubeconfigFile} {
				if !bytes.Equal(before[f], after[f]) {
					t.Errorf("%s changed", f)
				}
			}
			if first.AdminToken != second.AdminToken || !bytes.Equal(first.CACertPEM, second.CACertPEM) {
				t.Error("bundle's CA or admin token changed")
			}
			if changed := !bytes.Equal(before[ServerCertFile], after[ServerCertFile]); changed != tt.reissued {
				t.Errorf("server.crt changed = %v, want %v", changed, tt.reissued)
			}
			if changed := !bytes.Equal(before[ServerKeyFile], after[ServerKeyFile]); changed != tt.newKey {
				t.Errorf("server.key changed = %v, want %v", changed, tt.newKey)
			}
			if !tt.newKey && !bytes.Equal(prepared[ServerKeyFile], after[ServerKeyFile]) {
				t.Error("server.key rewritten although usable")
			}

			cert := readCert(t, filepath.Join(dir, ServerCertFile))
			var got []string
			got = append(got, cert.DNSNames...)
			for _, ip := range cert.IPAddresses {
				got = append(got, ip.String())
			}
			if !slices.Equal(got, tt.wantSANs) {
				t.Errorf("SANs %v, want %v", got, tt.wantSANs)
			}
			if !tt.wantExpires.IsZero() && !cert.NotAfter.Equal(tt.wantExpires) {
				t.Errorf("NotAfter %v, want %v", cert.NotAfter, tt.wantExpires)
			}
			verifyServing(t, dir, opts.Now())
			if !bytes.Equal(second.ServerTLS.Certificates[0].Certificate[0], cert.Raw) {
				t.Error("ServerTLS does not hold the certificate on disk")
			}
		})
	}
}

// verifyServing checks that the serving certificate on disk chains to the CA
// on disk for each of its names.
func verifyServing(t *testing.T, dir string, now time.Time) {
	t.Helper()
	ca := readCert(t, filepath.Join(dir, CACertFile))
	cert := readCert(t, filepath.Join(dir, ServerCertFile))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	names := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	for _, n := range names {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: n, CurrentTime: now}); err != nil {
			t.Errorf("verify for %s: %v", n, err)
		}
	}
}

func TestServingCertVerifiesForEverySAN(t *testing.T) {
	dir := t.TempDir()
	b := mustEnsure(t, dir, Options{
		SANs: []string{"node1.example.com", "*.apps.example.com", "192.0.2.10", "[2001:db8::10]", "skiff"},
		Now:  clock(t0),
	})
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.CACertPEM) {
		t.Fatal("bundle CA is not PEM")
	}
	leaf := b.ServerTLS.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(b.ServerTLS.Certificates[0].Certificate[0]); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{name: "localhost", ok: true},
		{name: "127.0.0.1", ok: true},
		{name: "::1", ok: true},
		{name: "node1.example.com", ok: true},
		{name: "web.apps.example.com", ok: true},
		{name: "skiff", ok: true},
		{name: "192.0.2.10", ok: true},
		{name: "2001:db8::10", ok: true},
		{name: "other.example.com", ok: false},
		{name: "192.0.2.11", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := leaf.Verify(x509.VerifyOptions{
				Roots: roots, DNSName: tt.name, CurrentTime: t0,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			if (err == nil) != tt.ok {
				t.Fatalf("verify %s: err = %v, want ok = %v", tt.name, err, tt.ok)
			}
		})
	}
	// Every name the bundle reports is one the certificate verifies for.
	for _, n := range b.SANs {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: n, CurrentTime: t0}); err != nil {
			t.Errorf("bundle SAN %s: %v", n, err)
		}
	}
}

func TestEnsureErrors(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) // after a first start
		opts    Options
		want    error
		wantMsg string
	}{
		{
			name: "CA certificate without its key",
			prepare: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, CAKeyFile)); err != nil {
					t.Fatal(err)
				}
			},
			want: ErrCAKeyMissing,
		},
		{
			name: "CA key garbage",
			prepare: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, CAKeyFile), []byte("nope"), secretMode); err != nil {
					t.Fatal(err)
				}
			},
			want: ErrCorrupt, wantMsg: "ca.key",
		},
		{
			name: "CA key of another CA",
			prepare: func(t *testing.T, dir string) {
				k, _ := newKey()
				pemKey, _ := encodeKey(k)
				if err := os.WriteFile(filepath.Join(dir, CAKeyFile), pemKey, secretMode); err != nil {
					t.Fatal(err)
				}
			},
			want: ErrCorrupt, wantMsg: "does not match",
		},
		{
			name: "CA certificate that is not a CA",
			prepare: func(t *testing.T, dir string) {
				// The serving pair: a valid pair, but not a CA.
				for from, to := range map[string]string{ServerCertFile: CACertFile, ServerKeyFile: CAKeyFile} {
					b, _ := os.ReadFile(filepath.Join(dir, from))
					if err := os.WriteFile(filepath.Join(dir, to), b, secretMode); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: ErrCorrupt, wantMsg: "not a CA",
		},
		{
			name: "empty token",
			prepare: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, NodeTokenFile), []byte("\n"), secretMode); err != nil {
					t.Fatal(err)
				}
			},
			want: ErrCorrupt, wantMsg: "tokens/node is empty",
		},
		{
			name: "token with a space",
			prepare: func(t *testing.T, dir string) {
				if err := os.WriteFile(filepath.Join(dir, AdminTokenFile), []byte("a b"), secretMode); err != nil {
					t.Fatal(err)
				}
			},
			want: ErrCorrupt,
		},
		{
			name: "CA expired",
			opts: Options{Now: clock(t0.AddDate(10, 0, 1))},
			want: ErrCAExpired,
		},
		{
			name: "invalid SAN",
			opts: Options{SANs: []string{"not a name"}, Now: clock(t0)},
			want: ErrInvalidSAN,
		},
		{
			name:    "server URL not https",
			opts:    Options{Server: "http://127.0.0.1:6443", Now: clock(t0)},
			wantMsg: "want https://host[:port]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustEnsure(t, dir, Options{Now: clock(t0)})
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			opts := tt.opts
			if opts.Now == nil {
				opts.Now = clock(t0)
			}
			_, err := Ensure(context.Background(), dir, opts)
			if err == nil {
				t.Fatal("Ensure succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.HasPrefix(err.Error(), "pki: ") {
				t.Errorf("error %q: want prefix \"pki: \" and %q", err, tt.wantMsg)
			}
		})
	}
}

func TestEnsureCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Ensure(ctx, t.TempDir(), Options{Now: clock(t0)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestEnsureAfterInterruptedBootstrap replays the states a crash between two
// atomic writes can leave, and checks that the next start completes without
// replacing what was already written.
func TestEnsureAfterInterruptedBootstrap(t *testing.T) {
	tests := []struct {
		name string
		keep []string // files left from a complete bootstrap
		same []string // of those, the ones that must not change
	}{
		{name: "only the CA key", keep: []string{CAKeyFile}, same: []string{CAKeyFile}},
		{name: "CA, no serving files", keep: []string{CAKeyFile, CACertFile}, same: []string{CAKeyFile, CACertFile}},
		{name: "CA and serving key",
			keep: []string{CAKeyFile, CACertFile, ServerKeyFile},
			same: []string{CAKeyFile, CACertFile, ServerKeyFile}},
		{name: "everything but the dashboard token and kubeconfig",
			keep: []string{CAKeyFile, CACertFile, ServerKeyFile, ServerCertFile, AdminTokenFile, NodeTokenFile},
			same: []string{CAKeyFile, CACertFile, ServerKeyFile, ServerCertFile, AdminTokenFile, NodeTokenFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustEnsure(t, dir, Options{Now: clock(t0)})
			before := snapshot(t, dir)
			for _, f := range allFiles {
				if !slices.Contains(tt.keep, f) {
					if err := os.Remove(filepath.Join(dir, f)); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A temporary file a crashed write left behind.
			stale := filepath.Join(dir, TLSDir, tmpPrefix+"server.crt-123")
			if err := os.WriteFile(stale, []byte("half"), secretMode); err != nil {
				t.Fatal(err)
			}

			b := mustEnsure(t, dir, Options{Now: clock(t0.Add(time.Hour))})
			after := snapshot(t, dir)
			for _, f := range tt.same {
				if !bytes.Equal(before[f], after[f]) {
					t.Errorf("%s changed", f)
				}
			}
			if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stale temporary file not removed: %v", err)
			}
			verifyServing(t, dir, t0.Add(time.Hour))
			kc, err := LoadKubeconfig(b.KubeconfigPath)
			if err != nil {
				t.Fatal(err)
			}
			if kc.Token != b.AdminToken || !bytes.Equal(kc.CAPEM, after[CACertFile]) {
				t.Error("kubeconfig does not match the bundle")
			}
		})
	}
}

func TestEnsureTightensModes(t *testing.T) {
	dir := t.TempDir()
	mustEnsure(t, dir, Options{Now: clock(t0)})
	loose := map[string]fs.FileMode{
		AdminTokenFile: 0o644, CAKeyFile: 0o640, ServerKeyFile: 0o604, KubeconfigFile: 0o666, TLSDir: 0o755,
	}
	for f, m := range loose {
		if err := os.Chmod(filepath.Join(dir, f), m); err != nil {
			t.Fatal(err)
		}
	}
	mustEnsure(t, dir, Options{Now: clock(t0)})
	for f := range loose {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v still open to others", f, st.Mode().Perm())
		}
	}
}

func TestEnsureLeavesExistingDataDirMode(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustEnsure(t, dir, Options{Now: clock(t0)})
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o755 {
		t.Fatalf("data dir mode %v, want 0755 left alone", st.Mode().Perm())
	}
}

func TestEnsureKubeconfigFollowsServer(t *testing.T) {
	dir := t.TempDir()
	b := mustEnsure(t, dir, Options{Now: clock(t0)})
	kc, err := LoadKubeconfig(b.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if kc.Server != DefaultServer {
		t.Fatalf("server %s, want %s", kc.Server, DefaultServer)
	}
	b = mustEnsure(t, dir, Options{Server: "https://skiff.example.com:7443", Now: clock(t0)})
	if kc, err = LoadKubeconfig(b.KubeconfigPath); err != nil {
		t.Fatal(err)
	}
	if kc.Server != "https://skiff.example.com:7443" {
		t.Fatalf("server %s after restart with a new URL", kc.Server)
	}
	if !slices.Contains(b.SANs, "skiff.example.com") {
		t.Errorf("server host not in SANs %v", b.SANs)
	}
}

func TestParseSANs(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		dns     []string
		ips     []string
		wantErr bool
	}{
		{name: "split and sorted", in: []string{"b.example", "10.0.0.2", "a.example", "10.0.0.1"},
			dns: []string{"a.example", "b.example"}, ips: []string{"10.0.0.1", "10.0.0.2"}},
		{name: "normalised and deduplicated", in: []string{"Node1.", "node1", " 10.0.0.1 ", "::ffff:10.0.0.1", "[::1]", "", "::1"},
			dns: []string{"node1"}, ips: []string{"10.0.0.1", "::1"}},
		{name: "wildcard", in: []string{"*.apps.example"}, dns: []string{"*.apps.example"}},
		{name: "space inside", in: []string{"a b"}, wantErr: true},
		{name: "zone", in: []string{"fe80::1%eth0"}, wantErr: true},
		{name: "leading hyphen", in: []string{"-x.example"}, wantErr: true},
		{name: "empty label", in: []string{"a..b"}, wantErr: true},
		{name: "URL", in: []string{"https://x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parseSANs(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidSAN) {
					t.Fatalf("err = %v, want ErrInvalidSAN", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ips []string
			for _, ip := range s.netIPs() {
				ips = append(ips, net.IP(ip).String())
			}
			if !slices.Equal(s.dns, tt.dns) || !slices.Equal(ips, tt.ips) {
				t.Fatalf("got %v %v, want %v %v", s.dns, ips, tt.dns, tt.ips)
			}
		})
	}
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, content := range []string{"one", "two, longer"} {
		if err := writeFileAtomic(p, []byte(content), secretMode); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only f", len(entries))
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), secretMode); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
