package store

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestLogEntryRoundTrip(t *testing.T) {
	const rev = 42
	tests := []struct {
		name string
		evs  []Event
	}{
		{"create", []Event{{Type: EventPut, Revision: rev,
			KV: KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: rev, ModRevision: rev}}}},
		{"update with empty values", []Event{{Type: EventPut, Revision: rev,
			KV:     KeyValue{Key: "/a", Value: []byte{}, CreateRevision: 7, ModRevision: rev},
			PrevKV: &KeyValue{Key: "/a", Value: []byte{}, CreateRevision: 7, ModRevision: 9}}}},
		{"delete", []Event{{Type: EventDelete, Revision: rev,
			KV:     KeyValue{Key: "/a", Value: []byte("last"), CreateRevision: 7, ModRevision: rev},
			PrevKV: &KeyValue{Key: "/a", Value: []byte("last"), CreateRevision: 7, ModRevision: 9}}}},
		{"several keys", []Event{
			{Type: EventPut, Revision: rev, KV: KeyValue{Key: "/a", Value: bytes.Repeat([]byte("x"), 300), CreateRevision: rev, ModRevision: rev}},
			{Type: EventDelete, Revision: rev, KV: KeyValue{Key: "/b", Value: []byte("y"), CreateRevision: 1, ModRevision: rev},
				PrevKV: &KeyValue{Key: "/b", Value: []byte("y"), CreateRevision: 1, ModRevision: 1 << 40}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeEvents(rev, encodeEvents(tc.evs), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.evs) {
				t.Fatalf("round trip\n got %+v\nwant %+v", got, tc.evs)
			}
		})
	}
}

func TestLogEntryFilter(t *testing.T) {
	evs := []Event{
		{Type: EventPut, Revision: 3, KV: KeyValue{Key: "/a/1", Value: []byte("1"), CreateRevision: 3, ModRevision: 3}},
		{Type: EventPut, Revision: 3, KV: KeyValue{Key: "/b/1", Value: []byte("2"), CreateRevision: 3, ModRevision: 3}},
	}
	got, err := decodeEvents(3, encodeEvents(evs), func(k string) bool { return hasPrefix(k, "/b/") })
	if err != nil || len(got) != 1 || got[0].KV.Key != "/b/1" {
		t.Fatalf("filtered decode = %+v, %v", got, err)
	}
}

func TestCorruptRecordsAreErrors(t *testing.T) {
	good := encodeEvents([]Event{{Type: EventPut, Revision: 5, KV: KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 5, ModRevision: 5}}})
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unknown format", append([]byte{9}, good[1:]...)},
		{"truncated", good[:len(good)-2]},
		{"trailing bytes", append(append([]byte{}, good...), 0)},
		{"huge count", []byte{logFormat, 0xff, 0xff, 0xff, 0x0f}},
		{"delete without previous value", []byte{logFormat, 1, flagDelete, 2, '/', 'a'}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeEvents(5, tc.b, nil); !errors.Is(err, errCorrupt) {
				t.Fatalf("decode = %v, want errCorrupt", err)
			}
		})
	}
	if _, err := decodeKV("/a", []byte("short")); !errors.Is(err, errCorrupt) {
		t.Fatalf("decodeKV short = %v, want errCorrupt", err)
	}
	if _, err := parseRevKey([]byte{1, 2}); !errors.Is(err, errCorrupt) {
		t.Fatalf("parseRevKey short = %v, want errCorrupt", err)
	}
}

// FuzzDecodeEvents: no input makes the decoder panic, and whatever decodes
// re-encodes to the same bytes.
func FuzzDecodeEvents(f *testing.F) {
	f.Add(encodeEvents([]Event{{Type: EventPut, Revision: 1, KV: KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 1, ModRevision: 1}}}))
	f.Add(encodeEvents([]Event{{Type: EventDelete, Revision: 1, KV: KeyValue{Key: "/a", ModRevision: 1},
		PrevKV: &KeyValue{Key: "/a", Value: []byte("v"), CreateRevision: 1}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := decodeEvents(1, b, nil)
		if err != nil {
			return
		}
		if again := encodeEvents(evs); !bytes.Equal(again, b) && len(evs) > 0 {
			// Non-canonical varints decode too; the re-encoding must at
			// least decode to the same events.
			evs2, err := decodeEvents(1, again, nil)
			if err != nil || !reflect.DeepEqual(evs, evs2) {
				t.Fatalf("re-encoding changed %+v into %+v (%v)", evs, evs2, err)
			}
		}
	})
}
