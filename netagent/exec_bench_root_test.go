package netagent_test

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/remotecommand"
	"github.com/skiff-dev/skiff/server/servertest"
)

// BenchmarkExecRoundTrip: one line on the stdin of `cat` in a container
// of the process runtime, read back on stdout, through the server's
// pods/exec (HTTPS and WebSocket on loopback) and its built-in agent (one
// exec session, b.N round trips).
func BenchmarkExecRoundTrip(b *testing.B) {
	requireNode(b)
	ns := netnstest.NewNode(b)
	ts := servertest.Start(b, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "bench-node"
		cfg.NodeIP = []string{"192.0.2.20"}
		cfg.Runtime = "process"
	}})
	s := ts.Server()
	select {
	case <-s.Agent().Ready():
	case <-time.After(30 * time.Second):
		b.Fatal("built-in agent not Ready")
	}
	admin, err := s.Client()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, resPods, "default", shellPod("bench", "exec sleep 3600")); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var p api.Pod
		if err := admin.Get(ctx, resPods, "default", "bench", &p); err == nil && p.Status.Phase == api.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("pod bench not running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e := newExecClient(b, s)
	c, err := e.dial(ctx, "bench", "exec", "", remotecommand.Options{Command: []string{"cat"}, Stdin: true, Stdout: true})
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	inR, inW := io.Pipe()
	done := make(chan struct{})
	go func() { _, _ = c.Run(inR, pw, io.Discard); pw.Close(); close(done) }()
	rd := bufio.NewReader(pr)
	line := []byte("ping\n")
	b.ResetTimer()
	for range b.N {
		if _, err := inW.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := rd.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	inW.Close()
	<-done
	zero := int64(1)
	_ = admin.Delete(ctx, resPods, "default", "bench", client.DeleteOptions{GracePeriodSeconds: &zero})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var p api.Pod
		if client.IsNotFound(admin.Get(ctx, resPods, "default", "bench", &p)) {
			break
		}
	}
	ts.Stop()
}
