package api

import (
	"encoding/json"
	"time"
)

// Time is a timestamp serialised as RFC 3339 with second precision, as
// Kubernetes does; the zero time is serialised as null.
type Time struct{ time.Time }

// Now is the current time truncated to seconds.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// IsZero reports whether t is the zero time (so omitempty-style checks work).
func (t Time) IsZero() bool { return t.Time.IsZero() }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = pt.Local().UTC()
	return nil
}

// MicroTime is a timestamp with microsecond precision (Events, Leases).
type MicroTime struct{ time.Time }

const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON implements json.Marshaler.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(rfc3339Micro))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pt, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = pt.UTC()
	return nil
}
