package server

import (
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

func TestNodeTokensKeepTheJoinAddress(t *testing.T) {
	dir := t.TempDir()
	nt, err := loadNodeTokens(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := nt.issue("n1", "password-0123456789", netip.MustParseAddr("::ffff:192.0.2.7"))
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := nt.joinAddress("n1"); !ok || a != netip.MustParseAddr("192.0.2.7") {
		t.Fatalf("joinAddress = %v %v", a, ok)
	}
	if _, err := nt.issue("n2", "password-0123456789", netip.Addr{}); err == nil {
		t.Fatal("a join without a client address was accepted")
	}
	// A record written before addresses were kept authenticates nothing
	// (the agent joins again on the 401), and has no address.
	legacy := `{"tokenHash":"` + hashSecret("secret") + `","passwordHash":"` + hashSecret("pw") + `"}`
	if err := os.WriteFile(filepath.Join(dir, nodeTokensDir, "old"), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	nt, err = loadNodeTokens(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nt.authenticate("node:old:secret"); ok {
		t.Fatal("a record without an address authenticated")
	}
	if _, ok := nt.joinAddress("old"); ok {
		t.Fatal("a record without an address has one")
	}
	if name, ok := nt.authenticate(tok); !ok || name != "n1" {
		t.Fatalf("n1's token after a reload: %q %v", name, ok)
	}
}

func TestNodeAPIPort(t *testing.T) {
	for in, want := range map[string]string{
		"https://10.0.0.1:10443": "10443", "https://node-a.example": "10250", "https://[fd00::1]:8443/": "8443",
		"http://10.0.0.1:10250": "", "https://10.0.0.1:0": "", "https://10.0.0.1:99999": "", "::": "",
	} {
		got, err := nodeAPIPort(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("nodeAPIPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
