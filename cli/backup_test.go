package cli

import (
	"bytes"
	"context"
	"io"
	"testing"
)

func TestBackupFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want BackupOptions
		bad  bool
	}{
		{args: []string{"backup", "--data-dir", "/d", "/tmp/b.db"}, want: BackupOptions{DataDir: "/d", File: "/tmp/b.db"}},
		{args: []string{"backup", "/tmp/b.db"}, want: BackupOptions{DataDir: "/var/lib/skiff", File: "/tmp/b.db"}},
		{args: []string{"backup", "--restore", "/tmp/b.db", "--data-dir", "/d"}, want: BackupOptions{DataDir: "/d", Restore: "/tmp/b.db"}},
		{args: []string{"backup"}, bad: true},
		{args: []string{"backup", "a", "b"}, bad: true},
		{args: []string{"backup", "--restore", "a", "b"}, bad: true},
	} {
		var got *BackupOptions
		root := NewRoot(Runners{Backup: func(_ context.Context, o BackupOptions, _ io.Writer) error {
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
		if got != nil && got.Restoring() != (tc.want.Restore != "") {
			t.Errorf("%v: Restoring() = %v", tc.args, got.Restoring())
		}
	}
}
