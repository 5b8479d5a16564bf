package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// pendingWrite is a closure's net write to one key.
type pendingWrite struct {
	value   []byte // the value put; nil when deleted
	deleted bool
	// recreated: the key was deleted and then put again by this closure, so
	// it is a new key whose CreateRevision is the transaction's revision.
	recreated bool
}

// boltTxn is the Txn a closure gets: its own writes overlaid on the batch's
// bbolt read-write transaction, which already holds the applied writes of
// earlier closures in the batch. It is not safe for concurrent use.
type boltTxn struct {
	kv     *bolt.Bucket
	log    *bolt.Bucket
	rev    int64
	writes map[string]*pendingWrite
	done   bool
}

func newBoltTxn(tx *bolt.Tx, rev int64) *boltTxn {
	return &boltTxn{
		kv:     tx.Bucket(bucketKV),
		log:    tx.Bucket(bucketLog),
		rev:    rev,
		writes: make(map[string]*pendingWrite),
	}
}

// finish marks the Txn unusable; the closure has returned.
func (t *boltTxn) finish() { t.done = true }

// Revision is the revision this transaction will commit at.
func (t *boltTxn) Revision() int64 { return t.rev }

// base reads the committed (or batch-applied) value of key.
func (t *boltTxn) base(key string) (KeyValue, bool, error) {
	if key == "" {
		return KeyValue{}, false, nil
	}
	v := t.kv.Get([]byte(key))
	if v == nil {
		return KeyValue{}, false, nil
	}
	kv, err := decodeKV(key, v)
	if err != nil {
		return KeyValue{}, false, err
	}
	return kv, true, nil
}

// pendingKV is the KeyValue a pending put shows; base is the key's value
// under the overlay, if any.
func (t *boltTxn) pendingKV(key string, w *pendingWrite, base KeyValue, hasBase bool) KeyValue {
	create := t.rev
	if hasBase && !w.recreated {
		create = base.CreateRevision
	}
	return KeyValue{Key: key, Value: slices.Clone(w.value), CreateRevision: create, ModRevision: t.rev}
}

// Get returns the key's current value as this closure sees it.
func (t *boltTxn) Get(key string) (KeyValue, bool, error) {
	if t.done {
		return KeyValue{}, false, errTxnDone
	}
	w, pending := t.writes[key]
	if pending && w.deleted {
		return KeyValue{}, false, nil
	}
	base, ok, err := t.base(key)
	if err != nil {
		return KeyValue{}, false, fmt.Errorf("store: txn get %q: %w", key, err)
	}
	if pending {
		return t.pendingKV(key, w, base, ok), true, nil
	}
	return base, ok, nil
}

// List returns every key with the prefix as this closure sees it, in key
// order.
func (t *boltTxn) List(prefix string) ([]KeyValue, error) {
	if t.done {
		return nil, errTxnDone
	}
	var over []string
	for k := range t.writes {
		if strings.HasPrefix(k, prefix) {
			over = append(over, k)
		}
	}
	slices.Sort(over)

	var out []KeyValue
	pfx := []byte(prefix)
	c := t.kv.Cursor()
	k, v := c.Seek(pfx)
	j := 0
	for {
		inBase := k != nil && bytes.HasPrefix(k, pfx)
		if !inBase && j == len(over) {
			return out, nil
		}
		if inBase && (j == len(over) || string(k) < over[j]) {
			kv, err := decodeKV(string(k), v)
			if err != nil {
				return nil, fmt.Errorf("store: txn list %q: %w", prefix, err)
			}
			out = append(out, kv)
			k, v = c.Next()
			continue
		}
		// The next key is a pending write, possibly shadowing a base key.
		key := over[j]
		j++
		var base KeyValue
		hasBase := inBase && string(k) == key
		if hasBase {
			var err error
			if base, err = decodeKV(key, v); err != nil {
				return nil, fmt.Errorf("store: txn list %q: %w", prefix, err)
			}
			k, v = c.Next()
		}
		if w := t.writes[key]; !w.deleted {
			out = append(out, t.pendingKV(key, w, base, hasBase))
		}
	}
}

// Put writes a value; the value is copied.
func (t *boltTxn) Put(key string, value []byte) error {
	if t.done {
		return errTxnDone
	}
	switch {
	case key == "":
		return errors.New("store: txn put: empty key")
	case len(key) > bolt.MaxKeySize:
		return fmt.Errorf("store: txn put: key of %d bytes is over %d", len(key), bolt.MaxKeySize)
	case len(value) > bolt.MaxValueSize-kvHeaderLen:
		return fmt.Errorf("store: txn put %q: value of %d bytes is too large", key, len(value))
	}
	if value == nil {
		value = []byte{}
	}
	w, ok := t.writes[key]
	if !ok {
		t.writes[key] = &pendingWrite{value: slices.Clone(value)}
		return nil
	}
	if w.deleted {
		w.deleted, w.recreated = false, true
	}
	w.value = slices.Clone(value)
	return nil
}

// Delete removes a key; an absent key is ErrNotFound.
func (t *boltTxn) Delete(key string) error {
	if t.done {
		return errTxnDone
	}
	if w, ok := t.writes[key]; ok {
		if w.deleted {
			return ErrNotFound
		}
		w.deleted, w.value, w.recreated = true, nil, false
		return nil
	}
	_, ok, err := t.base(key)
	if err != nil {
		return fmt.Errorf("store: txn delete %q: %w", key, err)
	}
	if !ok {
		return ErrNotFound
	}
	t.writes[key] = &pendingWrite{deleted: true}
	return nil
}

// apply writes the closure's net effect into the bbolt transaction and its
// log entry, and returns its events in key order (none when the net effect
// is empty) and the size of the log entry.
func (t *boltTxn) apply() ([]Event, int64, error) {
	keys := make([]string, 0, len(t.writes))
	for k := range t.writes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	evs := make([]Event, 0, len(keys))
	for _, key := range keys {
		w := t.writes[key]
		base, hasBase, err := t.base(key)
		if err != nil {
			return nil, 0, err
		}
		var prev *KeyValue
		if hasBase {
			prev = &base
		}
		if w.deleted {
			if !hasBase {
				continue // created and deleted by this closure: no write
			}
			if err := t.kv.Delete([]byte(key)); err != nil {
				return nil, 0, fmt.Errorf("delete %q: %w", key, err)
			}
			evs = append(evs, Event{
				Type:     EventDelete,
				Revision: t.rev,
				KV:       KeyValue{Key: key, Value: base.Value, CreateRevision: base.CreateRevision, ModRevision: t.rev},
				PrevKV:   prev,
			})
			continue
		}
		create := t.rev
		if hasBase && !w.recreated {
			create = base.CreateRevision
		}
		// w.value is owned by the Txn (Put copied it); the event takes it.
		kv := KeyValue{Key: key, Value: w.value, CreateRevision: create, ModRevision: t.rev}
		if err := t.kv.Put([]byte(key), encodeKV(kv.CreateRevision, kv.ModRevision, kv.Value)); err != nil {
			return nil, 0, fmt.Errorf("put %q: %w", key, err)
		}
		evs = append(evs, Event{Type: EventPut, Revision: t.rev, KV: kv, PrevKV: prev})
	}
	if len(evs) == 0 {
		return nil, 0, nil
	}
	entry := encodeEvents(evs)
	if err := t.log.Put(revKey(t.rev), entry); err != nil {
		return nil, 0, fmt.Errorf("log revision %d: %w", t.rev, err)
	}
	return evs, int64(len(entry)), nil
}
