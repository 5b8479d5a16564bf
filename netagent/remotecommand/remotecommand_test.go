package remotecommand_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestParseOptions(t *testing.T) {
	for _, c := range []struct {
		q    string
		exec bool
		want remotecommand.Options
		err  string
	}{
		{q: "command=ls&command=-l&stdout=true&stderr=1", exec: true, want: remotecommand.Options{Command: []string{"ls", "-l"}, Stdout: true, Stderr: true}},
		{q: "command=sh&stdin=true&stdout=true&stderr=true&tty=true", exec: true, want: remotecommand.Options{Command: []string{"sh"}, Stdin: true, Stdout: true, TTY: true}},
		{q: "stdout=true", exec: true, err: "you must specify at least one command for the container"},
		{q: "command=ls", exec: true, err: "you must specify at least 1 of stdin, stdout, stderr"},
		{q: "command=ls&stdout=maybe", exec: true, err: `stdout: "maybe" is not a boolean`},
		{q: "stdout=true", exec: false, want: remotecommand.Options{Stdout: true}},
	} {
		q, _ := url.ParseQuery(c.q)
		got, err := remotecommand.ParseOptions(q, c.exec)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: %v, want %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got.Command, " ") != strings.Join(c.want.Command, " ") || got.Stdin != c.want.Stdin || got.Stdout != c.want.Stdout || got.Stderr != c.want.Stderr || got.TTY != c.want.TTY {
			t.Errorf("%s: %+v %v, want %+v", c.q, got, err, c.want)
		}
		back, err := remotecommand.ParseOptions(got.Query(), c.exec)
		if err != nil || back.Stdin != got.Stdin || back.Stdout != got.Stdout || back.TTY != got.TTY {
			t.Errorf("%s: Query round trip %+v %v", c.q, back, err)
		}
	}
}

// echoServer upgrades and runs a fake command: it echoes stdin to
// stdout (upper-cased on stderr), reports resizes on stdout, and exits
// with the code in the first command word.
func echoServer(t *testing.T, done chan<- struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := remotecommand.ParseOptions(r.URL.Query(), true)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s, err := remotecommand.Upgrade(w, r, o)
		if err != nil {
			if !remotecommand.Answered(err) {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		defer func() { done <- struct{}{} }()
		st := s.Streams()
		var mu sync.Mutex
		if st.Resize != nil {
			st.Resize(func(sz runtime.TerminalSize) {
				mu.Lock()
				defer mu.Unlock()
				_, _ = io.WriteString(st.Stdout, "size "+strings.Repeat("x", int(sz.Width))+"\n")
			})
		}
		if st.Stdin != nil {
			b, _ := io.ReadAll(st.Stdin)
			mu.Lock()
			_, _ = st.Stdout.Write(b)
			mu.Unlock()
			if st.Stderr != nil {
				_, _ = st.Stderr.Write(bytes.ToUpper(b))
			}
		}
		switch o.Command[0] {
		case "0":
			s.Close(remotecommand.ExitCode(o.Command, 0))
		case "fail":
			s.Close(remotecommand.Failure("it broke"))
		default:
			s.Close(remotecommand.ExitCode(o.Command, 42))
		}
	}))
}

func dial(t *testing.T, srv *httptest.Server, o remotecommand.Options, protos ...string) (*remotecommand.Conn, error) {
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/?" + o.Query().Encode()
	d := &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	if protos != nil {
		// A raw dial with chosen subprotocols.
		d.Subprotocols = protos
		ws, resp, err := d.Dial(u, nil)
		if err == nil {
			ws.Close()
			return nil, errors.New("upgraded with " + ws.Subprotocol())
		}
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			return nil, errors.New(resp.Status + ": " + string(b))
		}
		return nil, err
	}
	return remotecommand.Dial(context.Background(), d, u, nil)
}

func TestSessionRoundTrip(t *testing.T) {
	done := make(chan struct{}, 10)
	srv := echoServer(t, done)
	defer srv.Close()

	// stdin to its end (v5 close), stdout, stderr, exit code.
	c, err := dial(t, srv, remotecommand.Options{Command: []string{"7"}, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Protocol() != remotecommand.ProtocolV5 {
		t.Errorf("protocol %q", c.Protocol())
	}
	var out, errb bytes.Buffer
	code, err := c.Run(strings.NewReader("hello"), &out, &errb)
	if err != nil || code != 42 || out.String() != "hello" || errb.String() != "HELLO" {
		t.Errorf("run: %d %v %q %q", code, err, out.String(), errb.String())
	}
	<-done

	// A size sent before stdin reaches the command first.
	c, err = dial(t, srv, remotecommand.Options{Command: []string{"0"}, Stdin: true, Stdout: true, TTY: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resize(runtime.TerminalSize{Width: 3, Height: 1}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code, err = c.Run(strings.NewReader("after\n"), &out, io.Discard)
	if err != nil || code != 0 || out.String() != "size xxx\nafter\n" {
		t.Errorf("tty: %d %v %q", code, err, out.String())
	}
	<-done

	// A failure other than an exit code.
	c, err = dial(t, srv, remotecommand.Options{Command: []string{"fail"}, Stdout: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(nil, io.Discard, io.Discard)
	var se *remotecommand.StatusError
	if !errors.As(err, &se) || se.Error() != "it broke" || se.Status.Reason != "InternalError" {
		t.Errorf("failure: %v", err)
	}
	<-done

	// The client going away mid-stdin: the session ends.
	c, err = dial(t, srv, remotecommand.Options{Command: []string{"0"}, Stdin: true, Stdout: true})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("partial"))
	_ = c.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when the client went away")
	}
}

func TestUpgradeRefusals(t *testing.T) {
	done := make(chan struct{}, 10)
	srv := echoServer(t, done)
	defer srv.Close()
	o := remotecommand.Options{Command: []string{"0"}, Stdout: true}
	if _, err := dial(t, srv, o, "v3.channel.k8s.io", "channel.k8s.io"); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "requested protocol(s) are not supported") {
		t.Errorf("old subprotocols: %v", err)
	}
	if _, err := dial(t, srv, o, remotecommand.ProtocolV4); err == nil || !strings.Contains(err.Error(), "upgraded with v4.channel.k8s.io") {
		t.Errorf("v4: %v", err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/?"+o.Query().Encode(), nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Set("X-Stream-Protocol-Version", "v3.channel.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "SPDY is served with v4.channel.k8s.io only") {
		t.Errorf("SPDY v3: %d %s", resp.StatusCode, b)
	}
}
