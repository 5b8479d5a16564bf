package cli

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNetExecFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    NetExecOptions
		wantErr string
	}{
		{name: "defaults", args: []string{"netexec"}, want: NetExecOptions{HTTPPort: 8080, UDPPort: 8081}},
		{name: "ports", args: []string{"netexec", "--http-port", "9376", "--udp-port", "9377"}, want: NetExecOptions{HTTPPort: 9376, UDPPort: 9377}},
		{name: "no udp", args: []string{"netexec", "--udp-port=-1"}, want: NetExecOptions{HTTPPort: 8080, UDPPort: -1}},
		{name: "bad http port", args: []string{"netexec", "--http-port", "0"}, wantErr: "--http-port"},
		{name: "bad udp port", args: []string{"netexec", "--udp-port", "70000"}, wantErr: "--udp-port"},
		{name: "extra arg", args: []string{"netexec", "x"}, wantErr: "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *NetExecOptions
			root := NewRoot(Runners{NetExec: func(_ context.Context, o NetExecOptions) error {
				got = &o
				return nil
			}}, &bytes.Buffer{})
			root.SetArgs(tc.args)
			root.SetErr(&bytes.Buffer{})
			err := root.ExecuteContext(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil {
					t.Fatalf("err %v (runner called: %v), want %q", err, got != nil, tc.wantErr)
				}
				return
			}
			if err != nil || got == nil || *got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRuntimeInitPassesArgsUnparsed(t *testing.T) {
	var got []string
	boom := errors.New("exec failed")
	root := NewRoot(Runners{RuntimeInit: func(args []string) error {
		got = args
		return boom
	}}, &bytes.Buffer{})
	args := []string{"--sync-fd=3", "--netns=/run/netns/p", "--", "/bin/app", "--help", "-x"}
	root.SetArgs(append([]string{RuntimeInitCommand}, args...))
	if err := root.ExecuteContext(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("err %v, want the runner's", err)
	}
	if !slices.Equal(got, args) {
		t.Fatalf("runner got %q, want %q", got, args)
	}
	var help bytes.Buffer
	root = NewRoot(Runners{}, &help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(help.String(), RuntimeInitCommand) || !strings.Contains(help.String(), "netexec") {
		t.Fatalf("help should list netexec and hide %s:\n%s", RuntimeInitCommand, help.String())
	}
}
