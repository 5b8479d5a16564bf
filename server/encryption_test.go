package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/encrypt"
)

// Distinctive plaintexts: no other bytes of a data dir hold them.
const (
	encDataValue   = "enc-data-6a1f0c93be-value"
	encStringValue = "enc-stringdata-d41c77e2-value"
	encLaterValue  = "enc-later-plaintext-93c0aa1e"
)

func encryptionOpts(dir string, on bool, logs *configKindsLogs) servertest.Options {
	o := servertest.Options{DataDir: dir, Config: func(c *config.Server) { c.SecretsEncryption = on }}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return o
}

// dbHolds says whether the store file holds v or its base64 (a Secret's
// data is base64 in JSON).
func dbHolds(t *testing.T, dir, v string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "db", "skiff.db"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(v)) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString([]byte(v))))
}

func secretData(t *testing.T, c *client.Client, name string) map[string]string {
	t.Helper()
	var s api.Secret
	if err := c.Get(ctxT(t, 20*time.Second), resSecrets, "default", name, &s); err != nil {
		t.Fatalf("get secret %s: %v", name, err)
	}
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// storedSecrets reads the closed store file's Secret values as stored.
func storedSecrets(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ctx := ctxT(t, 20*time.Second)
	st, err := store.OpenBolt(ctx, filepath.Join(dir, "db", "skiff.db"), store.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := st.List(ctx, "/registry/core/secrets/", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, kv := range res.Items {
		out[kv.Key] = kv.Value
	}
	return out
}

// TestSecretsEncryptionAtRest: with --secrets-encryption, Secrets made
// from data and stringData are in the bbolt file only encrypted, while
// gets, lists and watches give them back; a restart without the flag still
// reads them (and writes plaintext), one with it encrypts what was
// plaintext (and says how many); the 1 MiB data limit still stores.
func TestSecretsEncryptionAtRest(t *testing.T) {
	dir := t.TempDir()
	logs := &configKindsLogs{}
	ts := servertest.Start(t, encryptionOpts(dir, true, logs))
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)

	w, err := c.Watch(ctx, resSecrets, "default", client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "from-data"}, Data: map[string][]byte{"password": []byte(encDataValue)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "from-stringdata"}, StringData: map[string]string{"token": encStringValue}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{encDataValue, encStringValue} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != client.EventAdded || !bytes.Contains(ev.Object, []byte(base64.StdEncoding.EncodeToString([]byte(want)))) {
				t.Fatalf("watch event %s %s, want ADDED with %q", ev.Type, ev.Object, want)
			}
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
	}
	if got := secretData(t, c, "from-data"); got["password"] != encDataValue {
		t.Fatalf("from-data = %v", got)
	}
	if got := secretData(t, c, "from-stringdata"); got["token"] != encStringValue {
		t.Fatalf("from-stringdata = %v", got)
	}
	var list api.SecretList
	if err := c.List(ctx, resSecrets, "default", client.ListOptions{}, &list); err != nil || len(list.Items) != 2 {
		t.Fatalf("list: %d items, %v", len(list.Items), err)
	}
	// At the 1 MiB data limit a Secret still stores: the size limit is the
	// object's before encryption.
	big := strings.Repeat("b", api.MaxConfigDataSize)
	if err := c.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "big"}, Data: map[string][]byte{"b": []byte(big)}}); err != nil {
		t.Fatalf("a 1 MiB Secret: %v", err)
	}
	if got := secretData(t, c, "big"); got["b"] != big {
		t.Fatalf("the 1 MiB Secret reads %d bytes", len(got["b"]))
	}
	w.Stop()
	ts.Stop()

	for _, v := range []string{encDataValue, encStringValue} {
		if dbHolds(t, dir, v) {
			t.Errorf("the store file holds %q", v)
		}
	}
	keyFile := filepath.Join(dir, server.EncryptionConfigFile)
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v", keyFile, st, err)
	}
	for key, v := range storedSecrets(t, dir) {
		if !bytes.HasPrefix(v, []byte(encrypt.ValuePrefix+"aesgcmkey-")) {
			t.Errorf("%s is stored as %.40q", key, v)
		}
	}
	if !strings.Contains(logs.String(), "secrets encryption: made a new key") {
		t.Errorf("no log of the new key:\n%s", logs)
	}

	// Without the flag: the encrypted Secrets read, a new one is plaintext.
	ts = servertest.Start(t, encryptionOpts(dir, false, nil))
	c = ts.Client()
	if got := secretData(t, c, "from-data"); got["password"] != encDataValue {
		t.Fatalf("without the flag from-data = %v", got)
	}
	if err := c.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "later"}, StringData: map[string]string{"v": encLaterValue}}); err != nil {
		t.Fatal(err)
	}
	ts.Stop()
	if !dbHolds(t, dir, encLaterValue) {
		t.Fatal("without the flag the new Secret is not in the file in plaintext: this grep cannot see plaintext")
	}

	// With the flag again: the plaintext one is rewritten, and said so.
	logs = &configKindsLogs{}
	ts = servertest.Start(t, encryptionOpts(dir, true, logs))
	if !strings.Contains(logs.String(), "rewritten=1 wasPlaintext=1") {
		t.Errorf("the start does not say it encrypted 1 Secret:\n%s", logs)
	}
	if got := secretData(t, ts.Client(), "later"); got["v"] != encLaterValue {
		t.Fatalf("later = %v", got)
	}
	var later api.Secret
	if err := ts.Client().Get(ctx, resSecrets, "default", "later", &later); err != nil {
		t.Fatal(err)
	}
	ts.Stop()
	stored := storedSecrets(t, dir)
	if v := stored["/registry/core/secrets/default/later"]; !bytes.HasPrefix(v, []byte(encrypt.ValuePrefix)) {
		t.Errorf("after the start with the flag later is stored as %.40q", v)
	}
	// The rewrite's revision is the object's resourceVersion.
	st, err := store.OpenBolt(ctx, filepath.Join(dir, "db", "skiff.db"), store.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := st.Get(ctx, "/registry/core/secrets/default/later")
	st.Close()
	if err != nil || later.ResourceVersion != fmt.Sprint(kv.ModRevision) {
		t.Errorf("later's resourceVersion %s, stored at revision %d (%v)", later.ResourceVersion, kv.ModRevision, err)
	}
}

// TestSecretsEncryptionKeyFileErrors: a missing, wrong or damaged key file
// refuses the start with an error naming the file, never serving an empty
// Secret.
func TestSecretsEncryptionKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	ts := servertest.Start(t, encryptionOpts(dir, true, nil))
	if err := ts.Client().Create(ctxT(t, 20*time.Second), resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": encDataValue}}); err != nil {
		t.Fatal(err)
	}
	ts.Stop()
	keyFile := filepath.Join(dir, server.EncryptionConfigFile)
	good, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(good, []byte(`"secret": "`)) + len(`"secret": "`)
	otherKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	wrong := append(append(append([]byte{}, good[:i]...), otherKey...), good[i+44:]...)

	start := func(on bool) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := servertest.New(ctx, encryptionOpts(dir, on, nil))
		if err == nil {
			s.Close()
		}
		return err
	}
	cases := []struct {
		name    string
		content []byte // nil: no key file
		on      bool
		want    string
	}{
		{"missing, without the flag", nil, false, "does not exist"},
		{"missing, with the flag", nil, true, "does not exist"},
		{"wrong key", wrong, true, "message authentication failed"},
		{"wrong key, without the flag", wrong, false, "message authentication failed"},
		{"not JSON", []byte("{"), true, "not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(keyFile)
			if c.content != nil {
				if err := os.WriteFile(keyFile, c.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := start(c.on)
			if err == nil || !strings.Contains(err.Error(), keyFile) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("start: %v; want an error naming %s and saying %q", err, keyFile, c.want)
			}
			if c.content == nil {
				if _, err := os.Stat(keyFile); err == nil {
					t.Error("a start over encrypted Secrets made a new key file")
				}
			}
		})
	}
	// The good file back: the Secret reads.
	if err := os.WriteFile(keyFile, good, 0o600); err != nil {
		t.Fatal(err)
	}
	ts = servertest.Start(t, encryptionOpts(dir, false, nil))
	if got := secretData(t, ts.Client(), "s"); got["k"] != encDataValue {
		t.Fatalf("with the key file back: %v", got)
	}
}

// TestSecretsEncryptRotate: `skiff secrets-encrypt rotate` (offline) puts
// a new key first and re-encrypts every Secret with it; status says so.
func TestSecretsEncryptRotate(t *testing.T) {
	dir := t.TempDir()
	ts := servertest.Start(t, encryptionOpts(dir, true, nil))
	ctx := ctxT(t, 60*time.Second)
	if err := ts.Client().Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": encDataValue}}); err != nil {
		t.Fatal(err)
	}
	// Refused while the server runs.
	var out bytes.Buffer
	if err := server.SecretsEncryptRotate(ctx, dir, &out); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("rotate with the server running: %v", err)
	}
	ts.Stop()
	before, err := encrypt.Load(filepath.Join(dir, server.EncryptionConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	// Names are per second.
	time.Sleep(1100 * time.Millisecond)
	if err := server.SecretsEncryptRotate(ctx, dir, &out); err != nil {
		t.Fatal(err)
	}
	after, err := encrypt.Load(filepath.Join(dir, server.EncryptionConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Names()) != 2 || after.Names()[1] != before.WriteKey() {
		t.Fatalf("keys after rotate %v, before %v", after.Names(), before.Names())
	}
	if !strings.Contains(out.String(), "re-encrypted 1 Secrets") {
		t.Errorf("rotate said:\n%s", out.String())
	}
	for key, v := range storedSecrets(t, dir) {
		if !bytes.HasPrefix(v, []byte(encrypt.ValuePrefix+after.WriteKey()+":")) {
			t.Errorf("after rotate %s is stored as %.50q", key, v)
		}
	}
	out.Reset()
	if err := server.SecretsEncryptStatus(ctx, dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Secrets: 0 plaintext, 1 encrypted", "with " + after.WriteKey() + ": 1"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("status does not say %q:\n%s", w, out.String())
		}
	}
	ts = servertest.Start(t, encryptionOpts(dir, true, nil))
	if got := secretData(t, ts.Client(), "s"); got["k"] != encDataValue {
		t.Fatalf("after rotate: %v", got)
	}
}

// BenchmarkSecretCreateGet is the cost of a Secret's create and get
// through the API (HTTPS on 127.0.0.1, bbolt with fsync on), without and
// with --secrets-encryption: docs/performance.md.
//
//	go test -run '^$' -bench SecretCreateGet -benchtime 200x ./server/
func BenchmarkSecretCreateGet(b *testing.B) {
	value := []byte(strings.Repeat("s3cret-", 150)) // about 1 KiB
	for _, on := range []bool{false, true} {
		mode := "plain"
		if on {
			mode = "aesgcm"
		}
		ts := servertest.Start(b, servertest.Options{Sync: true, Config: func(c *config.Server) { c.SecretsEncryption = on }})
		c := ts.Client()
		ctx := context.Background()
		b.Run("create/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s := &api.Secret{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("s-%d-%d", b.N, i)}, Data: map[string][]byte{"v": value}}
				if err := c.Create(ctx, resSecrets, "default", s); err != nil {
					b.Fatal(err)
				}
			}
		})
		if err := c.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "get"}, Data: map[string][]byte{"v": value}}); err != nil {
			b.Fatal(err)
		}
		b.Run("get/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s api.Secret
				if err := c.Get(ctx, resSecrets, "default", "get", &s); err != nil {
					b.Fatal(err)
				}
			}
		})
		ts.Stop()
	}
}
