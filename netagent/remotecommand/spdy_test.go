package remotecommand_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/moby/spdystream"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
)

// TestSPDYSession speaks SPDY/3.1 as kubectl 1.29 and older do: a POST
// upgrade offering v4.channel.k8s.io, then one stream per channel.
func TestSPDYSession(t *testing.T) {
	done := make(chan struct{}, 1)
	srv := echoServer(t, done)
	defer srv.Close()
	o := remotecommand.Options{Command: []string{"7"}, Stdin: true, Stdout: true, Stderr: true}
	nc, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/?"+o.Query().Encode(), nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Add("X-Stream-Protocol-Version", "v4.channel.k8s.io")
	req.Header.Add("X-Stream-Protocol-Version", "v3.channel.k8s.io")
	if err := req.Write(nc); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
		t.Fatalf("upgrade: %s %v", resp.Status, resp.Header)
	}
	if br.Buffered() > 0 {
		t.Fatal("bytes after the 101")
	}
	conn, err := spdystream.NewConnection(nc, false)
	if err != nil {
		t.Fatal(err)
	}
	go conn.Serve(spdystream.NoOpStreamHandler)
	defer conn.Close()
	open := func(typ string) *spdystream.Stream {
		st, err := conn.CreateStream(http.Header{"Streamtype": {typ}}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.WaitTimeout(5 * time.Second); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		return st
	}
	errSt, stdin, stdout, stderr := open("error"), open("stdin"), open("stdout"), open("stderr")
	if _, err := stdin.Write([]byte("over spdy")); err != nil {
		t.Fatal(err)
	}
	_ = stdin.Close() // half-close: EOF for the command
	out, _ := io.ReadAll(stdout)
	errb, _ := io.ReadAll(stderr)
	status, _ := io.ReadAll(errSt)
	var st api.Status
	if err := json.Unmarshal(status, &st); err != nil || st.Reason != "NonZeroExitCode" || st.Details == nil || st.Details.Causes[0].Message != "42" {
		t.Errorf("status %s: %v", status, err)
	}
	if string(out) != "over spdy" || string(errb) != "OVER SPDY" {
		t.Errorf("stdout %q, stderr %q", out, errb)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end")
	}
}
