package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// SecretsEncryptOptions are the flags of `skiff secrets-encrypt`.
type SecretsEncryptOptions struct {
	DataDir string // --data-dir: the server's data dir
	Verb    string // status or rotate
}

// SecretsEncryptVerbs are the verbs of `skiff secrets-encrypt` (k3s has
// status and rotate-keys).
var SecretsEncryptVerbs = []string{"status", "rotate"}

func newSecretsEncryptCommand(run func(context.Context, SecretsEncryptOptions, io.Writer) error) *cobra.Command {
	opts := SecretsEncryptOptions{DataDir: "/var/lib/skiff"}
	cmd := &cobra.Command{
		Use:   "secrets-encrypt status|rotate [--data-dir DIR]",
		Short: "Show how Secrets are kept at rest, or rotate their encryption key; the server must be stopped",
		Long: `secrets-encrypt works on a stopped server's data dir (it takes the data dir's lock).

  status  the key file (<data-dir>/cred/encryption-config.json), its keys, and
          how many stored Secrets are plaintext or encrypted, per key
  rotate  put a new AES-256 key first in the key file (made if missing) and
          re-encrypt every stored Secret with it; the older keys stay after it,
          to read the watch history; then start the server with
          --secrets-encryption`,
		ValidArgs: SecretsEncryptVerbs,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || (args[0] != "status" && args[0] != "rotate") {
				return fmt.Errorf("secrets-encrypt takes one verb: status or rotate")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if run == nil {
				return fmt.Errorf("secrets-encrypt is not available in this build")
			}
			opts.Verb = args[0]
			return run(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", opts.DataDir, "the server's data dir")
	return cmd
}
