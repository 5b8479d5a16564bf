package store

import (
	"encoding/binary"
	"fmt"
)

// revKey encodes a revision as a log key: 8 bytes big endian, so that key
// order is revision order.
func revKey(rev int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(rev))
	return b[:]
}

// parseRevKey decodes a log key.
func parseRevKey(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: log key of %d bytes", errCorrupt, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// kvHeaderLen is the size of the revision header of a kv record.
const kvHeaderLen = 16

// encodeKV encodes a kv record: create revision, mod revision, value.
func encodeKV(createRev, modRev int64, value []byte) []byte {
	b := make([]byte, kvHeaderLen+len(value))
	binary.BigEndian.PutUint64(b[0:8], uint64(createRev))
	binary.BigEndian.PutUint64(b[8:16], uint64(modRev))
	copy(b[kvHeaderLen:], value)
	return b
}

// decodeKV decodes a kv record read from bbolt. The value is copied, so the
// result outlives the transaction.
func decodeKV(key string, b []byte) (KeyValue, error) {
	if len(b) < kvHeaderLen {
		return KeyValue{}, fmt.Errorf("%w: kv record for %q of %d bytes", errCorrupt, key, len(b))
	}
	return KeyValue{
		Key:            key,
		CreateRevision: int64(binary.BigEndian.Uint64(b[0:8])),
		ModRevision:    int64(binary.BigEndian.Uint64(b[8:16])),
		Value:          append([]byte{}, b[kvHeaderLen:]...),
	}, nil
}

// logFormat is the first byte of every log entry.
const logFormat = 1

// Flags of one event in a log entry.
const (
	flagDelete  = 1 << 0 // the event is a delete; otherwise a put
	flagHasPrev = 1 << 1 // the key existed before the event
)

// encodeEvents encodes the events of one revision as a log entry.
//
// Layout: format byte, event count (uvarint), then per event: flags byte,
// key, and for a put the value and create revision; then, when the key
// existed before, the previous value, create and mod revisions. Strings and
// values are uvarint length + bytes; revisions are uvarints. A delete's KV is
// rebuilt from its previous value, so the value is not stored twice.
func encodeEvents(evs []Event) []byte {
	n := 1 + binary.MaxVarintLen64
	for _, ev := range evs {
		n += 1 + 3*binary.MaxVarintLen64 + len(ev.KV.Key) + len(ev.KV.Value)
		if ev.PrevKV != nil {
			n += 3*binary.MaxVarintLen64 + len(ev.PrevKV.Value)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, logFormat)
	b = binary.AppendUvarint(b, uint64(len(evs)))
	for _, ev := range evs {
		var flags byte
		if ev.Type == EventDelete {
			flags |= flagDelete
		}
		if ev.PrevKV != nil {
			flags |= flagHasPrev
		}
		b = append(b, flags)
		b = appendBytes(b, []byte(ev.KV.Key))
		if ev.Type != EventDelete {
			b = appendBytes(b, ev.KV.Value)
			b = binary.AppendUvarint(b, uint64(ev.KV.CreateRevision))
		}
		if ev.PrevKV != nil {
			b = appendBytes(b, ev.PrevKV.Value)
			b = binary.AppendUvarint(b, uint64(ev.PrevKV.CreateRevision))
			b = binary.AppendUvarint(b, uint64(ev.PrevKV.ModRevision))
		}
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// logDecoder walks an encoded log entry; it copies everything it returns.
type logDecoder struct {
	b   []byte
	err error
}

func (d *logDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint in log entry", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// field returns a length-prefixed field, not copied.
func (d *logDecoder) field() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < n {
		d.err = fmt.Errorf("%w: short log entry", errCorrupt)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// bytes returns a copy of a length-prefixed field.
func (d *logDecoder) bytes() []byte {
	v := d.field()
	if d.err != nil {
		return nil
	}
	return append([]byte{}, v...)
}

// skip passes over a length-prefixed field without copying it.
func (d *logDecoder) skip() { d.field() }

func (d *logDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = fmt.Errorf("%w: short log entry", errCorrupt)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// decodeEvents decodes the log entry of revision rev. keep filters events
// by key; nil keeps every event.
func decodeEvents(rev int64, b []byte, keep func(key string) bool) ([]Event, error) {
	d := &logDecoder{b: b}
	if f := d.byte(); d.err == nil && f != logFormat {
		return nil, fmt.Errorf("%w: log entry %d has format %d", errCorrupt, rev, f)
	}
	count := d.uvarint()
	if d.err == nil && count > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: log entry %d claims %d events", errCorrupt, rev, count)
	}
	var evs []Event
	for i := uint64(0); i < count && d.err == nil; i++ {
		flags := d.byte()
		key := string(d.field())
		if keep != nil && !keep(key) {
			// Walk past the event without copying its values.
			if flags&flagDelete == 0 {
				d.skip()
				d.uvarint()
			}
			if flags&flagHasPrev != 0 {
				d.skip()
				d.uvarint()
				d.uvarint()
			} else if flags&flagDelete != 0 {
				d.err = fmt.Errorf("%w: log entry %d deletes %q without a previous value", errCorrupt, rev, key)
			}
			continue
		}
		var ev Event
		ev.Revision = rev
		ev.KV = KeyValue{Key: key, ModRevision: rev}
		if flags&flagDelete != 0 {
			ev.Type = EventDelete
		} else {
			ev.Type = EventPut
			ev.KV.Value = d.bytes()
			ev.KV.CreateRevision = int64(d.uvarint())
		}
		if flags&flagHasPrev != 0 {
			prev := &KeyValue{Key: key}
			prev.Value = d.bytes()
			prev.CreateRevision = int64(d.uvarint())
			prev.ModRevision = int64(d.uvarint())
			ev.PrevKV = prev
		}
		if ev.Type == EventDelete {
			if ev.PrevKV == nil {
				d.err = fmt.Errorf("%w: log entry %d deletes %q without a previous value", errCorrupt, rev, key)
				break
			}
			ev.KV.Value = ev.PrevKV.Value
			ev.KV.CreateRevision = ev.PrevKV.CreateRevision
		}
		evs = append(evs, ev)
	}
	if d.err != nil {
		return nil, fmt.Errorf("log entry %d: %w", rev, d.err)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: log entry %d has %d trailing bytes", errCorrupt, rev, len(d.b))
	}
	return evs, nil
}
