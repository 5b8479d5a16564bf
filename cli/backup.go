package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// BackupOptions are the flags of `skiff backup`.
type BackupOptions struct {
	DataDir string // --data-dir: the server's data dir
	File    string // FILE: the copy to write (backup)
	Restore string // --restore FILE: the copy to put back (restore)
}

// Restoring says whether the options ask for a restore.
func (o BackupOptions) Restoring() bool { return o.Restore != "" }

func newBackupCommand(run func(context.Context, BackupOptions, io.Writer) error) *cobra.Command {
	opts := BackupOptions{DataDir: "/var/lib/skiff"}
	cmd := &cobra.Command{
		Use:   "backup [--data-dir DIR] FILE | backup --restore FILE [--data-dir DIR]",
		Short: "Copy the server's database to FILE, or put such a copy back (--restore); the server must be stopped",
		Long: `backup writes a consistent copy of the server's database (<data-dir>/db/skiff.db:
every object and the watch history) to FILE. --restore FILE checks FILE and
makes it the data dir's database (the one it replaces is kept as
db/skiff.db.before-restore). Both take the data dir's lock: they refuse while a
server runs on it. Neither copies tls/ or tokens/: keep those apart.`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case opts.Restore != "" && len(args) > 0:
				return fmt.Errorf("--restore FILE takes no other argument")
			case opts.Restore == "" && len(args) != 1:
				return fmt.Errorf("backup writes one FILE (or use --restore FILE)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == nil {
				return fmt.Errorf("backup is not available in this build")
			}
			if len(args) == 1 {
				opts.File = args[0]
			}
			return run(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DataDir, "data-dir", opts.DataDir, "the server's data dir")
	f.StringVar(&opts.Restore, "restore", "", "put this copy back as the data dir's database")
	return cmd
}
