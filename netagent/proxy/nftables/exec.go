package nftables

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Exec is a Kernel that runs the nft binary: one `nft -f -` per
// transaction. It exists to measure the nft path against netlink (README.md:
// nft dumps every chain before each command, ~0.2 s per small change at 10k
// Services) and as a fallback for debugging; the agent uses NewNetlink.
type Exec struct {
	// Command is the nft command line, e.g. {"nft"} or
	// {"ip", "netns", "exec", "NAME", "nft"}.
	Command []string
}

var _ Kernel = (*Exec)(nil)

// NewExec returns an Exec running cmd (default {"nft"}).
func NewExec(cmd ...string) *Exec {
	if len(cmd) == 0 {
		cmd = []string{"nft"}
	}
	return &Exec{Command: cmd}
}

func (e *Exec) nft(ctx context.Context, stdin string, args ...string) (string, error) {
	full := append(append([]string{}, e.Command[1:]...), args...)
	cmd := exec.CommandContext(ctx, e.Command[0], full...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("nft %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Run pipes the transaction's script into `nft -f -`.
func (e *Exec) Run(ctx context.Context, tx *Transaction) error {
	_, err := e.nft(ctx, tx.String(), "-f", "-")
	return err
}

// List parses `nft list chains` and `nft -t list sets` of the family.
func (e *Exec) List(ctx context.Context, family Family, table string) ([]string, []SetInfo, error) {
	out, err := e.nft(ctx, "", "list", "tables", family.String())
	if err != nil {
		return nil, nil, err
	}
	if !strings.Contains(out+"\n", fmt.Sprintf("table %s %s\n", family, table)) {
		return nil, nil, ErrNoTable
	}
	out, err = e.nft(ctx, "", "list", "chains", family.String())
	if err != nil {
		return nil, nil, err
	}
	var chains []string
	for _, name := range blockNames(out, family, table, "chain") {
		chains = append(chains, name[1])
	}
	out, err = e.nft(ctx, "", "-t", "list", "sets", family.String())
	if err != nil {
		return nil, nil, err
	}
	var sets []SetInfo
	for _, kn := range blockNames(out, family, table, "set", "map") {
		s := &Set{Name: kn[1]}
		if kn[0] == "map" {
			s.Value = []DataType{TypeVerdict}
		}
		if kn[2] != "" {
			if d, err := time.ParseDuration(kn[2]); err == nil {
				s.Timeout = d
			}
		}
		sets = append(sets, SetInfo{Name: s.Name, Set: s})
	}
	return chains, sets, nil
}

// blockNames returns {keyword, name, timeout} of the blocks of the given
// keywords inside "table FAMILY TABLE { ... }" of an nft listing.
func blockNames(listing string, family Family, table string, keywords ...string) [][3]string {
	var out [][3]string
	in := false
	sc := bufio.NewScanner(strings.NewReader(listing))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "table" && len(f) >= 3 {
			in = f[1] == family.String() && f[2] == table
			continue
		}
		if !in {
			continue
		}
		for _, k := range keywords {
			if f[0] == k && len(f) >= 2 {
				out = append(out, [3]string{k, f[1], ""})
			}
		}
		if f[0] == "timeout" && len(f) >= 2 && len(out) > 0 {
			out[len(out)-1][2] = f[1]
		}
	}
	return out
}
