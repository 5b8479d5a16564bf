package api

import (
	"encoding/json"
	"testing"
)

func TestIntOrStringJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    IntOrString
		out     string
		wantErr bool
	}{
		{name: "number", in: `80`, want: FromInt32(80), out: `80`},
		{name: "zero", in: `0`, want: FromInt32(0), out: `0`},
		{name: "named port", in: `"http"`, want: FromString("http"), out: `"http"`},
		{name: "percent", in: `"25%"`, want: FromString("25%"), out: `"25%"`},
		{name: "numeric string stays a string", in: `"80"`, want: FromString("80"), out: `"80"`},
		{name: "null is zero", in: `null`, want: IntOrString{}, out: `0`},
		{name: "float rejected", in: `1.5`, wantErr: true},
		{name: "too large rejected", in: `4294967296`, wantErr: true},
		{name: "object rejected", in: `{}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v IntOrString
			err := json.Unmarshal([]byte(tt.in), &v)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %+v, want error", tt.in, v)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if v != tt.want {
				t.Fatalf("Unmarshal(%s) = %+v, want %+v", tt.in, v, tt.want)
			}
			b, err := json.Marshal(v)
			if err != nil || string(b) != tt.out {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tt.out)
			}
		})
	}
}

func TestIntOrStringOmitZero(t *testing.T) {
	b, err := json.Marshal(ServicePort{Port: 80})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"port":80}` {
		t.Fatalf("unset targetPort marshals as %s, want it left out", b)
	}
	b, _ = json.Marshal(ServicePort{Port: 80, TargetPort: FromString("http")})
	if string(b) != `{"port":80,"targetPort":"http"}` {
		t.Fatalf("got %s", b)
	}
}

func TestIntOrStringScaledValue(t *testing.T) {
	tests := []struct {
		name    string
		v       IntOrString
		total   int
		roundUp bool
		want    int
		wantErr bool
	}{
		{name: "int ignores total", v: FromInt32(3), total: 10, want: 3},
		{name: "25% of 10 up", v: FromString("25%"), total: 10, roundUp: true, want: 3},
		{name: "25% of 10 down", v: FromString("25%"), total: 10, want: 2},
		{name: "25% of 4 exact", v: FromString("25%"), total: 4, roundUp: true, want: 1},
		{name: "25% of 1 up", v: FromString("25%"), total: 1, roundUp: true, want: 1},
		{name: "25% of 1 down", v: FromString("25%"), total: 1, want: 0},
		{name: "0%", v: FromString("0%"), total: 10, roundUp: true, want: 0},
		{name: "100% of 7", v: FromString("100%"), total: 7, want: 7},
		{name: "150% of 3 up", v: FromString("150%"), total: 3, roundUp: true, want: 5},
		{name: "of zero", v: FromString("50%"), total: 0, roundUp: true, want: 0},
		{name: "not a percent", v: FromString("http"), total: 10, wantErr: true},
		{name: "bad percent", v: FromString("x%"), total: 10, wantErr: true},
		{name: "numeric string without %", v: FromString("5"), total: 10, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.v.ScaledValue(tt.total, tt.roundUp)
			if tt.wantErr != (err != nil) {
				t.Fatalf("ScaledValue err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ScaledValue = %d, want %d", got, tt.want)
			}
		})
	}
	if _, err := GetScaledValueFromIntOrPercent(nil, 1, true); err == nil {
		t.Fatal("nil IntOrString: want error")
	}
	v := FromString("50%")
	if got, err := GetScaledValueFromIntOrPercent(&v, 5, false); err != nil || got != 2 {
		t.Fatalf("GetScaledValueFromIntOrPercent = %d, %v; want 2", got, err)
	}
}

func TestIntOrStringHelpers(t *testing.T) {
	if got := ParseIntOrString("8080"); got != FromInt32(8080) {
		t.Errorf("ParseIntOrString(8080) = %+v", got)
	}
	if got := ParseIntOrString("http"); got != FromString("http") {
		t.Errorf("ParseIntOrString(http) = %+v", got)
	}
	if got := FromString("42").IntValue(); got != 42 {
		t.Errorf("IntValue = %d", got)
	}
	if !(IntOrString{}).IsZero() || !FromString("").IsZero() || FromInt32(1).IsZero() || FromString("a").IsZero() {
		t.Error("IsZero wrong")
	}
	if FromInt32(7).String() != "7" || FromString("x").String() != "x" {
		t.Error("String wrong")
	}
}
