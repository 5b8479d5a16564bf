package encrypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/skiff-dev/skiff/store"
)

// ValuePrefix starts every encrypted value; the key's name and a colon
// follow it, then the nonce and the sealed value (kube-apiserver's
// aesgcm provider's layout).
const ValuePrefix = "k8s:enc:aesgcm:v1:"

// encPrefix is what any provider's encrypted value starts with upstream; a
// value that starts with it but not with ValuePrefix is of a provider
// Skiff does not have.
const encPrefix = "k8s:enc:"

const nonceSize = 12

// ErrDecrypt is wrapped by every error of a value that cannot be read:
// no key file, a key the file does not hold, a wrong key, a damaged value.
var ErrDecrypt = errors.New("cannot decrypt a stored value")

// Options configure a Store.
type Options struct {
	// Prefix: the keys under it are encrypted (the Secrets' key prefix).
	Prefix string
	// Keys is the key file; nil when there is none.
	Keys *Keys
	// KeyFile is the key file's path, for errors when Keys is nil.
	KeyFile string
	// Encrypt makes writes under Prefix encrypted with Keys' first key;
	// without it they are written as they are (identity), and encrypted
	// values are still read with Keys.
	Encrypt bool
	// Restamp returns value (a stored object) with its resourceVersion set
	// to rev, for Rewrite, whose writes commit at a new revision.
	Restamp func(value []byte, rev int64) ([]byte, error)
}

// Store is a store.Interface that encrypts and decrypts the values under
// Options.Prefix and passes everything else through.
type Store struct {
	inner store.Interface
	o     Options
}

var _ store.Interface = (*Store)(nil)

// New wraps inner. Encrypt needs Keys.
func New(inner store.Interface, o Options) (*Store, error) {
	if o.Encrypt && o.Keys == nil {
		return nil, errors.New("encrypt: Encrypt without Keys")
	}
	if o.Prefix == "" || !strings.HasSuffix(o.Prefix, "/") {
		return nil, fmt.Errorf("encrypt: prefix %q: want one ending in /", o.Prefix)
	}
	return &Store{inner: inner, o: o}, nil
}

func (s *Store) covers(key string) bool { return strings.HasPrefix(key, s.o.Prefix) }

// overlaps says whether a list or watch prefix may hold covered keys.
func (s *Store) overlaps(prefix string) bool {
	return strings.HasPrefix(prefix, s.o.Prefix) || strings.HasPrefix(s.o.Prefix, prefix)
}

// seal encrypts value, stored under key (the additional authenticated
// data, as upstream: a value copied under another key does not decrypt).
func (s *Store) seal(key string, value []byte) []byte {
	if !s.o.Encrypt || !s.covers(key) {
		return value
	}
	k := &s.o.Keys.keys[0]
	out := make([]byte, 0, len(ValuePrefix)+len(k.name)+1+nonceSize+len(value)+k.aead.Overhead())
	out = append(out, ValuePrefix...)
	out = append(out, k.name...)
	out = append(out, ':')
	nonce := out[len(out) : len(out)+nonceSize]
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go >= 1.24)
	out = out[:len(out)+nonceSize]
	return k.aead.Seal(out, nonce, value, []byte(key))
}

// keyName returns the name of the key value was encrypted with, "" for a
// plaintext value.
func keyName(value []byte) (string, []byte, error) {
	if !bytes.HasPrefix(value, []byte(encPrefix)) {
		return "", nil, nil
	}
	if !bytes.HasPrefix(value, []byte(ValuePrefix)) {
		end := bytes.IndexByte(value[len(encPrefix):], ':')
		p := value
		if end >= 0 {
			p = value[:len(encPrefix)+end]
		}
		if len(p) > 40 {
			p = p[:40]
		}
		return "", nil, fmt.Errorf("encrypted by provider %q, which Skiff does not have (it has aesgcm)", p)
	}
	rest := value[len(ValuePrefix):]
	i := bytes.IndexByte(rest, ':')
	if i <= 0 {
		return "", nil, fmt.Errorf("no key name after %q", ValuePrefix)
	}
	return string(rest[:i]), rest[i+1:], nil
}

// open decrypts a value read under key; plaintext values are returned as
// they are.
func (s *Store) open(key string, value []byte) ([]byte, error) {
	if !s.covers(key) {
		return value, nil
	}
	name, sealed, err := keyName(value)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrDecrypt, key, err)
	}
	if name == "" {
		return value, nil
	}
	if s.o.Keys == nil {
		return nil, fmt.Errorf("%w at %s: it is encrypted with key %q, and the key file %s does not exist (restore it from a backup of the data dir)", ErrDecrypt, key, name, s.o.KeyFile)
	}
	k := s.o.Keys.find(name)
	if k == nil {
		return nil, fmt.Errorf("%w at %s: it is encrypted with key %q, which the key file %s does not hold (it has %s)", ErrDecrypt, key, name, s.o.Keys.path, strings.Join(s.o.Keys.Names(), ", "))
	}
	if len(sealed) < nonceSize+k.aead.Overhead() {
		return nil, fmt.Errorf("%w at %s: a value of %d bytes is too short for key %q", ErrDecrypt, key, len(value), name)
	}
	plain, err := k.aead.Open(nil, sealed[:nonceSize], sealed[nonceSize:], []byte(key))
	if err != nil {
		return nil, fmt.Errorf("%w at %s with key %q of %s: %v (is it the key file this value was written with?)", ErrDecrypt, key, name, s.o.Keys.path, err)
	}
	return plain, nil
}

func (s *Store) openKV(kv *store.KeyValue) error {
	v, err := s.open(kv.Key, kv.Value)
	if err != nil {
		return err
	}
	kv.Value = v
	return nil
}

// Get implements store.Interface.
func (s *Store) Get(ctx context.Context, key string) (store.KeyValue, error) {
	kv, err := s.inner.Get(ctx, key)
	if err != nil {
		return kv, err
	}
	if err := s.openKV(&kv); err != nil {
		return store.KeyValue{}, err
	}
	return kv, nil
}

// List implements store.Interface.
func (s *Store) List(ctx context.Context, prefix string, opts store.ListOptions) (store.ListResult, error) {
	res, err := s.inner.List(ctx, prefix, opts)
	if err != nil || !s.overlaps(prefix) {
		return res, err
	}
	for i := range res.Items {
		if err := s.openKV(&res.Items[i]); err != nil {
			return store.ListResult{}, err
		}
	}
	return res, nil
}

// Update implements store.Interface: fn's transaction reads decrypted
// values and its writes under the prefix are encrypted.
func (s *Store) Update(ctx context.Context, fn func(store.Txn) error) (int64, error) {
	return s.inner.Update(ctx, func(tx store.Txn) error { return fn(&txn{tx: tx, s: s}) })
}

// Revision implements store.Interface.
func (s *Store) Revision(ctx context.Context) (int64, error) { return s.inner.Revision(ctx) }

// Close implements store.Interface.
func (s *Store) Close() error { return s.inner.Close() }

// Watch implements store.Interface. A watch whose prefix holds no covered
// key is the inner one; otherwise events are decrypted by a goroutine
// between the two channels, which ends the watch with an EventError
// (wrapping ErrDecrypt) on a value it cannot read.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64, opts store.WatchOptions) (<-chan store.Event, error) {
	if !s.overlaps(prefix) {
		return s.inner.Watch(ctx, prefix, fromRev, opts)
	}
	wctx, cancel := context.WithCancel(ctx)
	in, err := s.inner.Watch(wctx, prefix, fromRev, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan store.Event, cap(in))
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for range in {
			}
		}()
		for ev := range in {
			ev, err := s.openEvent(ev)
			if err != nil {
				ev = store.Event{Type: store.EventError, Err: err}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Type == store.EventError {
				return
			}
		}
	}()
	return out, nil
}

// openEvent decrypts an event's values into new ones: the inner event's
// are shared with other watchers.
func (s *Store) openEvent(ev store.Event) (store.Event, error) {
	if ev.Type != store.EventPut && ev.Type != store.EventDelete {
		return ev, nil
	}
	if err := s.openKV(&ev.KV); err != nil {
		return store.Event{}, err
	}
	if ev.PrevKV != nil {
		prev := *ev.PrevKV
		if err := s.openKV(&prev); err != nil {
			return store.Event{}, err
		}
		ev.PrevKV = &prev
	}
	return ev, nil
}

// txn is the store.Txn of an Update through a Store.
type txn struct {
	tx store.Txn
	s  *Store
}

func (t *txn) Revision() int64 { return t.tx.Revision() }

func (t *txn) Get(key string) (store.KeyValue, bool, error) {
	kv, ok, err := t.tx.Get(key)
	if err != nil || !ok {
		return kv, ok, err
	}
	if err := t.s.openKV(&kv); err != nil {
		return store.KeyValue{}, false, err
	}
	return kv, true, nil
}

func (t *txn) List(prefix string) ([]store.KeyValue, error) {
	kvs, err := t.tx.List(prefix)
	if err != nil || !t.s.overlaps(prefix) {
		return kvs, err
	}
	out := make([]store.KeyValue, len(kvs))
	for i, kv := range kvs {
		if err := t.s.openKV(&kv); err != nil {
			return nil, err
		}
		out[i] = kv
	}
	return out, nil
}

func (t *txn) Put(key string, value []byte) error { return t.tx.Put(key, t.s.seal(key, value)) }

func (t *txn) Delete(key string) error { return t.tx.Delete(key) }

// Report counts the stored values under the prefix by how they are kept.
type Report struct {
	Plaintext int            // stored as they are
	ByKey     map[string]int // encrypted, by key name
	Rewritten int            // written again by Rewrite
}

// Encrypted is the number of encrypted values.
func (r Report) Encrypted() int {
	n := 0
	for _, c := range r.ByKey {
		n += c
	}
	return n
}

// rewriteBatch is how many values one Rewrite transaction writes.
const rewriteBatch = 100

// Scan reads every value under the prefix and counts them; a value it
// cannot decrypt is an error (wrapping ErrDecrypt, naming the key file).
func (s *Store) Scan(ctx context.Context) (Report, error) {
	return s.walk(ctx, false)
}

// Rewrite writes again every value under the prefix that is not as a
// write would store it now: with Encrypt, the plaintext ones and those of
// an older key; without, the encrypted ones (in plaintext). Each rewrite
// commits at a new revision, with its resourceVersion restamped (Restamp),
// so that watchers see a MODIFIED event, as after a storage migration
// upstream.
func (s *Store) Rewrite(ctx context.Context) (Report, error) {
	if s.o.Restamp == nil {
		return Report{}, errors.New("encrypt: Rewrite needs Options.Restamp")
	}
	return s.walk(ctx, true)
}

func (s *Store) walk(ctx context.Context, rewrite bool) (Report, error) {
	rep := Report{ByKey: map[string]int{}}
	want := ""
	if s.o.Encrypt {
		want = s.o.Keys.WriteKey()
	}
	after := ""
	for {
		res, err := s.inner.List(ctx, s.o.Prefix, store.ListOptions{Limit: rewriteBatch, After: after})
		if err != nil {
			return rep, err
		}
		var stale []string
		for _, kv := range res.Items {
			name, _, err := keyName(kv.Value)
			if err == nil {
				_, err = s.open(kv.Key, kv.Value)
			}
			if err != nil {
				if !errors.Is(err, ErrDecrypt) {
					err = fmt.Errorf("%w at %s: %v", ErrDecrypt, kv.Key, err)
				}
				return rep, err
			}
			if name == "" {
				rep.Plaintext++
			} else {
				rep.ByKey[name]++
			}
			if name != want {
				stale = append(stale, kv.Key)
			}
		}
		if rewrite && len(stale) > 0 {
			n := 0
			_, err := s.Update(ctx, func(tx store.Txn) error {
				n = 0
				for _, key := range stale {
					kv, ok, err := tx.Get(key)
					if err != nil {
						return err
					}
					if !ok {
						continue // deleted since the list
					}
					v, err := s.o.Restamp(kv.Value, tx.Revision())
					if err != nil {
						return fmt.Errorf("encrypt: restamp %s: %w", key, err)
					}
					if err := tx.Put(key, v); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				return rep, err
			}
			rep.Rewritten += n
		}
		if !res.More || len(res.Items) == 0 {
			return rep, nil
		}
		after = res.Items[len(res.Items)-1].Key
	}
}
