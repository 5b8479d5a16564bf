package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl/threeway"
)

const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

func newEditCommand(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "edit TYPE NAME | TYPE/NAME",
		Short: "Edit a resource in $EDITOR",
		Long: `Open the object as YAML (or JSON with -o json) in $KUBE_EDITOR, else
$EDITOR, else vi. When the editor exits, the changes are sent as a
strategic merge patch; if the server refuses them the file is reopened
with the errors at the top, as kubectl does. Saving an unchanged or empty
file cancels the edit.`,
		Example: `  skiff edit svc/data-channel
  EDITOR=nano skiff edit deployment compute-node`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return usageError("the edit mode must be yaml or json, not %q", output)
			}
			s, err := g.connect(cmd)
			if err != nil {
				return err
			}
			info, name, err := s.oneTarget(args, "edit")
			if err != nil {
				return err
			}
			return s.edit(cmd.Context(), info, name, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "the format to edit in: yaml or json")
	return cmd
}

// editorCommand is the editor to run on path: $KUBE_EDITOR, $EDITOR or
// vi; a value with spaces runs through sh -c, as kubectl's does.
func (s *session) editorCommand(path string) *exec.Cmd {
	editor := s.env.Getenv("KUBE_EDITOR")
	if editor == "" {
		editor = s.env.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	var c *exec.Cmd
	if strings.ContainsAny(editor, " \t") {
		c = exec.Command("sh", "-c", editor+` "$0"`, path)
	} else {
		c = exec.Command(editor, path)
	}
	c.Stdin, c.Stdout, c.Stderr = s.env.In, s.env.Out, s.env.ErrOut
	return c
}

func (s *session) edit(ctx context.Context, info *api.ResourceInfo, name, format string) error {
	ns := s.namespaceFor(info, false)
	p, err := client.ResourcePath(info, ns, name)
	if err != nil {
		return err
	}
	data, err := s.raw.getJSON(ctx, p, nil, acceptJSON)
	if err != nil {
		return err
	}
	original, err := threeway.Decode(data)
	if err != nil {
		return err
	}
	if md, ok := original["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	body, err := encodeForEdit(original, format)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "skiff-edit-*."+format)
	if err != nil {
		return fmt.Errorf("edit: %w", err)
	}
	path := f.Name()
	f.Close()
	keep := false
	defer func() {
		if !keep {
			os.Remove(path)
		}
	}()

	header := editHeader
	var lastFailed []byte // the content of the last attempt the server refused
	for {
		if err := os.WriteFile(path, append([]byte(header), body...), 0o600); err != nil {
			return fmt.Errorf("edit: %w", err)
		}
		if err := s.editorCommand(path).Run(); err != nil {
			return fmt.Errorf("edit: running the editor: %w", err)
		}
		edited, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("edit: %w", err)
		}
		content := stripComments(edited)
		if len(bytes.TrimSpace(content)) == 0 {
			fmt.Fprintln(s.env.Out, "Edit cancelled, no changes made.")
			return nil
		}
		if lastFailed != nil && bytes.Equal(content, lastFailed) {
			keep = true
			fmt.Fprintf(s.env.ErrOut, "A copy of your changes has been stored to %q\n", path)
			return usageError("Edit cancelled, no valid changes were saved.")
		}
		js, err := yaml.YAMLToJSON(content)
		var obj map[string]any
		if err == nil {
			obj, err = threeway.Decode(js)
		}
		if err != nil {
			header = editHeader + "# The edited file had a syntax error: " + strings.ReplaceAll(err.Error(), "\n", "\n# ") + "\n#\n"
			body, lastFailed = content, content
			continue
		}
		if reflect.DeepEqual(obj, original) {
			fmt.Fprintln(s.env.Out, "Edit cancelled, no changes made.")
			return nil
		}
		if str(obj, "metadata", "name") != name || str(obj, "kind") != str(original, "kind") || str(obj, "apiVersion") != str(original, "apiVersion") {
			header = editHeader + "# error: the name, kind and apiVersion of the object cannot be changed\n#\n"
			body, lastFailed = content, content
			continue
		}
		patch := threeway.TwoWay(original, obj)
		if len(patch) == 0 {
			fmt.Fprintln(s.env.Out, "Edit cancelled, no changes made.")
			return nil
		}
		pdata, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		err = s.c.Patch(ctx, info, ns, name, client.StrategicMergePatchType, pdata, nil)
		if err == nil {
			fmt.Fprintf(s.env.Out, "%s edited\n", objectRef(info, name))
			return nil
		}
		var ae *client.APIError
		if !errors.As(err, &ae) {
			return err
		}
		header = editHeader + editErrorComment(info, name, ae)
		body, lastFailed = content, content
	}
}

// editErrorComment is the block kubectl puts above a refused edit.
func editErrorComment(info *api.ResourceInfo, name string, ae *client.APIError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %q was not valid:\n", qualifiedResource(info), name)
	st := ae.Status
	if st.Details != nil && len(st.Details.Causes) > 0 {
		for _, c := range st.Details.Causes {
			msg := c.Message
			if c.Field != "" && !strings.HasPrefix(msg, c.Field+":") {
				msg = c.Field + ": " + msg
			}
			fmt.Fprintf(&b, "# * %s\n", strings.ReplaceAll(msg, "\n", "\n#   "))
		}
	} else {
		fmt.Fprintf(&b, "# * %s\n", strings.ReplaceAll(st.Message, "\n", "\n#   "))
	}
	b.WriteString("#\n")
	return b.String()
}

// stripComments drops the lines that start with '#'.
func stripComments(data []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

func encodeForEdit(obj map[string]any, format string) ([]byte, error) {
	if format == "json" {
		return toJSON(obj)
	}
	return toYAML(obj)
}
