package cli

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/skiff-dev/skiff/internal/config"
)

func TestSecretsEncryptFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want SecretsEncryptOptions
		bad  bool
	}{
		{args: []string{"secrets-encrypt", "status"}, want: SecretsEncryptOptions{DataDir: "/var/lib/skiff", Verb: "status"}},
		{args: []string{"secrets-encrypt", "rotate", "--data-dir", "/d"}, want: SecretsEncryptOptions{DataDir: "/d", Verb: "rotate"}},
		{args: []string{"secrets-encrypt"}, bad: true},
		{args: []string{"secrets-encrypt", "rotate-keys"}, bad: true},
		{args: []string{"secrets-encrypt", "status", "rotate"}, bad: true},
	} {
		var got *SecretsEncryptOptions
		root := NewRoot(Runners{SecretsEncrypt: func(_ context.Context, o SecretsEncryptOptions, _ io.Writer) error {
			got = &o
			return nil
		}}, &bytes.Buffer{})
		root.SetArgs(tc.args)
		root.SetErr(&bytes.Buffer{})
		err := root.ExecuteContext(context.Background())
		if tc.bad {
			if err == nil || got != nil {
				t.Errorf("%v: accepted (%v)", tc.args, got)
			}
			continue
		}
		if err != nil || got == nil || *got != tc.want {
			t.Errorf("%v: %v, options %+v, want %+v", tc.args, err, got, tc.want)
		}
	}
	// --secrets-encryption reaches the server's config.
	var cfg config.Server
	root := NewRoot(Runners{Server: func(_ context.Context, c config.Server) error { cfg = c; return nil }}, &bytes.Buffer{})
	root.SetArgs([]string{"server", "--secrets-encryption"})
	if err := root.ExecuteContext(context.Background()); err != nil || !cfg.SecretsEncryption {
		t.Errorf("server --secrets-encryption: %v, SecretsEncryption %v", err, cfg.SecretsEncryption)
	}
}
