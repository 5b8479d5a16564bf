package encrypt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/encrypt"
	"github.com/skiff-dev/skiff/store/storetest"
)

const secrets = "/registry/core/secrets/"

// restamp appends the revision, so a test sees that Rewrite called it.
func restamp(v []byte, rev int64) ([]byte, error) {
	if i := bytes.Index(v, []byte("@rev")); i >= 0 {
		v = v[:i]
	}
	return fmt.Appendf(append([]byte{}, v...), "@rev%d", rev), nil
}

func newKeys(t testing.TB) *encrypt.Keys {
	t.Helper()
	k, err := encrypt.Create(filepath.Join(t.TempDir(), "cred", "encryption-config.json"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func wrap(t testing.TB, inner store.Interface, keys *encrypt.Keys, on bool) *encrypt.Store {
	t.Helper()
	s, err := encrypt.New(inner, encrypt.Options{Prefix: secrets, Keys: keys, KeyFile: "/nonexistent/encryption-config.json", Encrypt: on, Restamp: restamp})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s store.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Update(context.Background(), func(tx store.Txn) error { return tx.Put(key, []byte(value)) })
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func get(t *testing.T, s store.Interface, key string) string {
	t.Helper()
	kv, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(kv.Value)
}

// plaintextForms are the byte strings that would show a value in a file:
// itself and its base64 (JSON's encoding of a Secret's data).
func plaintextForms(v string) [][]byte {
	return [][]byte{[]byte(v), []byte(base64.StdEncoding.EncodeToString([]byte(v)))}
}

func fileHolds(t *testing.T, path, v string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plaintextForms(v) {
		if bytes.Contains(b, f) {
			return true
		}
	}
	return false
}

func TestEncryptedOnDiskPlainToReaders(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	bolt := storetest.MustOpenBoltAt(t, path, store.BoltOptions{NoSync: true})
	keys := newKeys(t)
	s := wrap(t, bolt, keys, true)

	const secret, other = "hunter2-secret-7f3a9c", "plain-configmap-4b1e"
	sk := secrets + "default/db"
	put(t, s, sk, secret)
	put(t, s, "/registry/core/configmaps/default/cfg", other)
	// A value under a key that only looks like the prefix is not covered.
	put(t, s, "/registry/core/secretsx/default/db", other+"-x")

	if got := get(t, s, sk); got != secret {
		t.Fatalf("Get = %q, want %q", got, secret)
	}
	raw, err := bolt.Get(ctx, sk)
	if err != nil {
		t.Fatal(err)
	}
	want := encrypt.ValuePrefix + keys.WriteKey() + ":"
	if !bytes.HasPrefix(raw.Value, []byte(want)) || bytes.Contains(raw.Value, []byte(secret)) {
		t.Fatalf("stored value %q: want %q then ciphertext", raw.Value, want)
	}
	if n := len(raw.Value) - len(secret); n != 47+len(keys.WriteKey()) {
		t.Errorf("encryption adds %d bytes, want 47 + the key name", n)
	}
	if got := get(t, bolt, "/registry/core/configmaps/default/cfg"); got != other {
		t.Errorf("a ConfigMap is stored as %q, want it as it is", got)
	}
	if got := get(t, bolt, "/registry/core/secretsx/default/db"); got != other+"-x" {
		t.Errorf("secretsx is stored as %q, want it as it is", got)
	}
	// Each write has its own nonce.
	put(t, s, sk, secret)
	raw2, _ := bolt.Get(ctx, sk)
	if bytes.Equal(raw.Value, raw2.Value) {
		t.Error("two writes of one value are the same bytes: the nonce is not new")
	}

	res, err := s.List(ctx, secrets, store.ListOptions{})
	if err != nil || len(res.Items) != 1 || string(res.Items[0].Value) != secret {
		t.Fatalf("List = %+v, %v", res.Items, err)
	}
	res, err = s.List(ctx, "/registry/", store.ListOptions{})
	if err != nil || len(res.Items) != 3 {
		t.Fatalf("List /registry/ = %d items, %v", len(res.Items), err)
	}
	for _, kv := range res.Items {
		if strings.HasPrefix(string(kv.Value), encrypt.ValuePrefix) {
			t.Errorf("List /registry/ gives %s encrypted", kv.Key)
		}
	}
	// The transaction reads what it and others wrote, decrypted.
	_, err = s.Update(ctx, func(tx store.Txn) error {
		kv, ok, err := tx.Get(sk)
		if err != nil || !ok || string(kv.Value) != secret {
			return fmt.Errorf("txn Get = %q %v %v", kv.Value, ok, err)
		}
		if err := tx.Put(secrets+"default/two", []byte(secret+"-two")); err != nil {
			return err
		}
		kvs, err := tx.List(secrets)
		if err != nil || len(kvs) != 2 || string(kvs[1].Value) != secret+"-two" {
			return fmt.Errorf("txn List = %+v %v", kvs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Close(); err != nil {
		t.Fatal(err)
	}
	if fileHolds(t, path, secret) {
		t.Errorf("%s holds the Secret's plaintext", path)
	}
	if !fileHolds(t, path, other) {
		t.Errorf("%s does not hold the ConfigMap's value: the grep cannot see plaintext", path)
	}
}

func TestWatchDecrypts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bolt := storetest.MustOpenBolt(t)
	s := wrap(t, bolt, newKeys(t), true)
	sk := secrets + "default/w"
	start := put(t, s, sk, "v1")
	put(t, s, sk, "v2")
	if _, err := s.Update(ctx, func(tx store.Txn) error { return tx.Delete(sk) }); err != nil {
		t.Fatal(err)
	}
	// From history: the create, update and delete, decrypted.
	ch, err := s.Watch(ctx, secrets, start-1, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		ev := <-ch
		prev := "-"
		if ev.PrevKV != nil {
			prev = string(ev.PrevKV.Value)
		}
		got = append(got, fmt.Sprintf("%d %s %s", ev.Type, ev.KV.Value, prev))
	}
	want := []string{
		fmt.Sprintf("%d v1 -", store.EventPut),
		fmt.Sprintf("%d v2 v1", store.EventPut),
		fmt.Sprintf("%d v2 v2", store.EventDelete),
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", got, want)
	}
	// Live, under a wider prefix.
	wide, err := s.Watch(ctx, "/registry/core/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, sk, "v3")
	put(t, s, "/registry/core/configmaps/default/c", "cm")
	for _, w := range []string{"v3", "cm"} {
		if ev := <-wide; string(ev.KV.Value) != w {
			t.Fatalf("live event %q, want %q", ev.KV.Value, w)
		}
	}
	if ev := <-ch; string(ev.KV.Value) != "v3" {
		t.Fatalf("live event %q, want v3", ev.KV.Value)
	}
	// The raw watch still sees ciphertext: the wrapper copied, not changed, the shared event.
	rawCh, err := bolt.Watch(ctx, secrets, start-1, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-rawCh; !bytes.HasPrefix(ev.KV.Value, []byte(encrypt.ValuePrefix)) {
		t.Fatalf("raw event %q is not encrypted", ev.KV.Value)
	}
	// Ending the context closes the channel.
	cancel()
	for range ch {
	}
	for range wide {
	}
}

func TestWatchEndsOnUndecryptable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bolt := storetest.MustOpenBolt(t)
	put(t, wrap(t, bolt, newKeys(t), true), secrets+"a/b", "x")
	ch, err := wrap(t, bolt, newKeys(t), false).Watch(ctx, secrets, 1, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := <-ch
	if !ok || ev.Type != store.EventError || !errors.Is(ev.Err, encrypt.ErrDecrypt) {
		t.Fatalf("event %+v, want an EventError wrapping ErrDecrypt", ev)
	}
	if _, ok := <-ch; ok {
		t.Fatal("the channel stays open after the EventError")
	}
}

func TestPlaintextReadAndRewritten(t *testing.T) {
	ctx := context.Background()
	bolt := storetest.MustOpenBolt(t)
	put(t, bolt, secrets+"default/a", "plain-a")
	put(t, bolt, secrets+"default/b", "plain-b")
	put(t, bolt, "/registry/core/configmaps/default/c", "plain-c")
	keys := newKeys(t)
	s := wrap(t, bolt, keys, true)
	if got := get(t, s, secrets+"default/a"); got != "plain-a" {
		t.Fatalf("a plaintext Secret reads %q", got)
	}
	before, _ := bolt.Revision(ctx)
	rep, err := s.Rewrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rewritten != 2 || rep.Plaintext != 2 || rep.Encrypted() != 0 {
		t.Fatalf("Rewrite = %+v, want 2 plaintext values rewritten", rep)
	}
	after, _ := bolt.Revision(ctx)
	if after != before+1 {
		t.Errorf("Rewrite took revisions %d..%d, want one transaction", before, after)
	}
	if got, want := get(t, s, secrets+"default/a"), fmt.Sprintf("plain-a@rev%d", after); got != want {
		t.Errorf("rewritten value %q, want %q (restamped at its revision)", got, want)
	}
	if raw := get(t, bolt, secrets+"default/b"); !strings.HasPrefix(raw, encrypt.ValuePrefix+keys.WriteKey()+":") {
		t.Errorf("after Rewrite b is stored as %q", raw)
	}
	if raw := get(t, bolt, "/registry/core/configmaps/default/c"); raw != "plain-c" {
		t.Errorf("Rewrite changed a ConfigMap: %q", raw)
	}
	rep, err = s.Rewrite(ctx)
	if err != nil || rep.Rewritten != 0 || rep.ByKey[keys.WriteKey()] != 2 {
		t.Fatalf("second Rewrite = %+v, %v; want nothing to do", rep, err)
	}

	// Rotation: a new first key; the old values are read, then rewritten.
	old := keys.WriteKey()
	if err := keys.Rotate(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if keys.WriteKey() == old || len(keys.Names()) != 2 {
		t.Fatalf("after Rotate the keys are %v", keys.Names())
	}
	loaded, err := encrypt.Load(keys.Path())
	if err != nil || strings.Join(loaded.Names(), ",") != strings.Join(keys.Names(), ",") {
		t.Fatalf("reloaded %v, %v; want %v", loaded, err, keys.Names())
	}
	s = wrap(t, bolt, loaded, true)
	rep, err = s.Rewrite(ctx)
	if err != nil || rep.Rewritten != 2 || rep.ByKey[old] != 2 {
		t.Fatalf("Rewrite after Rotate = %+v, %v", rep, err)
	}
	if raw := get(t, bolt, secrets+"default/a"); !strings.HasPrefix(raw, encrypt.ValuePrefix+loaded.WriteKey()+":") {
		t.Errorf("after the rotation a is stored as %q", raw)
	}

	// Without Encrypt, with the key file: reads decrypt, writes are plaintext.
	off := wrap(t, bolt, loaded, false)
	if got := get(t, off, secrets+"default/a"); !strings.HasPrefix(got, "plain-a@rev") {
		t.Errorf("without Encrypt a reads %q", got)
	}
	put(t, off, secrets+"default/d", "plain-d")
	if raw := get(t, bolt, secrets+"default/d"); raw != "plain-d" {
		t.Errorf("without Encrypt a write is stored as %q", raw)
	}
	// And its Rewrite decrypts everything.
	rep, err = off.Rewrite(ctx)
	if err != nil || rep.Rewritten != 2 {
		t.Fatalf("Rewrite without Encrypt = %+v, %v", rep, err)
	}
	if raw := get(t, bolt, secrets+"default/a"); !strings.HasPrefix(raw, "plain-a@rev") {
		t.Errorf("after decrypting a is stored as %q", raw)
	}
}

func TestUnreadableValuesNameTheKeyFile(t *testing.T) {
	ctx := context.Background()
	bolt := storetest.MustOpenBolt(t)
	keys := newKeys(t)
	put(t, wrap(t, bolt, keys, true), secrets+"default/a", "sekrit")
	other, err := encrypt.Create(filepath.Join(t.TempDir(), "other.json"), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		s    *encrypt.Store
		want []string
	}{
		{"no key file", wrap(t, bolt, nil, false), []string{"/nonexistent/encryption-config.json", "does not exist", keys.WriteKey()}},
		{"another key file", wrap(t, bolt, other, true), []string{other.Path(), "does not hold", keys.WriteKey()}},
	}
	// The same key name with other bytes: a wrong key.
	wrong := filepath.Join(t.TempDir(), "wrong.json")
	b, err := os.ReadFile(keys.Path())
	if err != nil {
		t.Fatal(err)
	}
	o, _ := os.ReadFile(other.Path())
	secretOf := func(b []byte) string {
		i := bytes.Index(b, []byte(`"secret": "`)) + len(`"secret": "`)
		return string(b[i : i+44])
	}
	if err := os.WriteFile(wrong, bytes.Replace(b, []byte(secretOf(b)), []byte(secretOf(o)), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	wk, err := encrypt.Load(wrong)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name string
		s    *encrypt.Store
		want []string
	}{"wrong key", wrap(t, bolt, wk, true), []string{wrong, "message authentication failed", keys.WriteKey()}})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, encrypt.ErrDecrypt) {
					t.Fatalf("%s: %v, want ErrDecrypt", what, err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %q does not say %q", what, err, w)
					}
				}
			}
			kv, err := c.s.Get(ctx, secrets+"default/a")
			if kv.Value != nil {
				t.Errorf("Get gave a value %q with the error", kv.Value)
			}
			check("Get", err)
			_, err = c.s.List(ctx, secrets, store.ListOptions{})
			check("List", err)
			_, err = c.s.Scan(ctx)
			check("Scan", err)
			_, err = c.s.Update(ctx, func(tx store.Txn) error {
				_, _, err := tx.Get(secrets + "default/a")
				return err
			})
			check("txn Get", err)
		})
	}

	// A value moved under another key does not decrypt (the key is authenticated).
	raw, _ := bolt.Get(ctx, secrets+"default/a")
	put(t, bolt, secrets+"default/moved", string(raw.Value))
	if _, err := wrap(t, bolt, keys, true).Get(ctx, secrets+"default/moved"); !errors.Is(err, encrypt.ErrDecrypt) {
		t.Errorf("a value moved to another key reads: %v", err)
	}
	// Another provider's prefix.
	put(t, bolt, secrets+"default/cbc", "k8s:enc:aescbc:v1:key1:xxxx")
	if _, err := wrap(t, bolt, keys, true).Get(ctx, secrets+"default/cbc"); !errors.Is(err, encrypt.ErrDecrypt) || !strings.Contains(err.Error(), "aescbc") {
		t.Errorf("an aescbc value: %v", err)
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cred", "encryption-config.json")
	if _, err := encrypt.Load(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v", err)
	}
	k, err := encrypt.Create(path, time.Date(2026, 12, 2, 6, 50, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if k.WriteKey() != "aesgcmkey-20261202T065000Z" {
		t.Errorf("key name %q", k.WriteKey())
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | fs.ModeDir} {
		st, err := os.Stat(p)
		if err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, st.Mode(), err, want)
		}
	}
	if _, err := encrypt.Create(path, time.Now()); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second Create: %v", err)
	}
	b, _ := os.ReadFile(path)
	for _, w := range []string{`"kind": "EncryptionConfiguration"`, `"apiVersion": "apiserver.config.k8s.io/v1"`, `"secrets"`, `"aesgcm"`, `"identity": {}`} {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("the key file has no %s:\n%s", w, b)
		}
	}
	// A looser mode is tightened.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := encrypt.Load(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode after Load %v", st.Mode())
	}

	good := string(b)
	bad := map[string]string{
		"not json":        "{",
		"kind":            strings.Replace(good, "EncryptionConfiguration", "Other", 1),
		"resource":        strings.Replace(good, `"secrets"`, `"configmaps"`, 1),
		"provider":        strings.Replace(good, `"aesgcm"`, `"aescbc"`, 1),
		"short key":       strings.Replace(good, good[strings.Index(good, `"secret": "`)+11:strings.Index(good, `"secret": "`)+55], "QUJD", 1),
		"not base64":      strings.Replace(good, `"secret": "`, `"secret": "!!`, 1),
		"name with colon": strings.Replace(good, "aesgcmkey-", "aes:gcm-", 1),
		"unknown field":   strings.Replace(good, `"kind"`, `"extra": 1, "kind"`, 1),
	}
	for name, content := range bad {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := encrypt.Load(p)
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Fatalf("Load = %v, want an error naming %s", err, p)
			}
		})
	}
}
