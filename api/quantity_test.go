package api

import (
	"encoding/json"
	"math/big"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	tests := []struct {
		in      Quantity
		want    string // a big.Rat string
		wantErr bool
	}{
		{in: "1", want: "1"},
		{in: "100m", want: "1/10"},
		{in: "1.5", want: "3/2"},
		{in: ".5", want: "1/2"},
		{in: "64Mi", want: "67108864"},
		{in: "1Gi", want: "1073741824"},
		{in: "2k", want: "2000"},
		{in: "1M", want: "1000000"},
		{in: "2e3", want: "2000"},
		{in: "1E-2", want: "1/100"},
		{in: "-1", want: "-1"},
		{in: "+1", want: "1"},
		{in: "5n", want: "1/200000000"},
		{in: "", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "1Kb", wantErr: true},
		{in: "1 Mi", wantErr: true},
		{in: "1..2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.in), func(t *testing.T) {
			got, err := ParseQuantity(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseQuantity(%q) = %v, want error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseQuantity(%q): %v", tt.in, err)
			}
			want, _ := new(big.Rat).SetString(tt.want)
			if got.Cmp(want) != 0 {
				t.Fatalf("ParseQuantity(%q) = %v, want %v", tt.in, got, want)
			}
		})
	}
}

func TestQuantityValues(t *testing.T) {
	if v, ok := Quantity("250m").MilliValue(); !ok || v != 250 {
		t.Errorf("MilliValue(250m) = %d, %v", v, ok)
	}
	if v, ok := Quantity("1.5m").MilliValue(); !ok || v != 2 {
		t.Errorf("MilliValue(1.5m) = %d, %v; want rounded up 2", v, ok)
	}
	if v, ok := Quantity("128Mi").Value(); !ok || v != 128<<20 {
		t.Errorf("Value(128Mi) = %d, %v", v, ok)
	}
	if _, ok := Quantity("nope").Value(); ok {
		t.Error("Value(nope) ok")
	}
}

func TestQuantityJSON(t *testing.T) {
	var r ResourceList
	if err := json.Unmarshal([]byte(`{"cpu":1,"memory":"64Mi","x":0.5}`), &r); err != nil {
		t.Fatal(err)
	}
	if r["cpu"] != "1" || r["memory"] != "64Mi" || r["x"] != "0.5" {
		t.Fatalf("got %v", r)
	}
	b, _ := json.Marshal(r)
	if string(b) != `{"cpu":"1","memory":"64Mi","x":"0.5"}` {
		t.Fatalf("Marshal = %s", b)
	}
	if err := json.Unmarshal([]byte(`{"cpu":true}`), &r); err == nil {
		t.Fatal("bool quantity accepted")
	}
}
