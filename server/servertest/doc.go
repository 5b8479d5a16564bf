// Package servertest starts a real Skiff server (package server: PKI,
// bbolt, allocators, API server on HTTPS, controllers) on loopback for a
// test, and checks at the end that it stopped cleanly.
//
// # Usage
//
//	func TestSomething(t *testing.T) {
//		ts := servertest.Start(t, servertest.Options{
//			DisabledControllers: []string{"nodelifecycle"},
//			LBCIDR:              "198.51.100.0/29",
//			Config:              func(c *config.Server) { c.DNSTTL = 7 * time.Second },
//		})
//		c := ts.Client() // admin, over HTTPS, trusting the server's CA
//		if err := c.Create(ctx, services, "default", svc); err != nil {
//			t.Fatal(err)
//		}
//		run(t, "kubectl", "--kubeconfig", ts.Kubeconfig(), "get", "svc")
//
//		ts.Restart() // same data dir, same URL and DNS address
//		c = ts.Client()
//		...
//	} // cleanup: Stop, and the checks below
//
// A TestMain, or a server that a package's tests share, uses New and
// Close instead of Start.
//
// # What a server gets
//
//   - Its data dir is t.TempDir() unless Options.DataDir names one (a
//     second server over the files of a first).
//   - The API listens on 127.0.0.1 on a port the kernel chooses, and with
//     Options.DNS cluster DNS does too (UDP and TCP on one port), so
//     parallel tests never clash. A Restart binds the same addresses again,
//     so the admin kubeconfig stays valid, retrying for a few seconds while
//     they are still held.
//   - fsync is off (Options.Sync turns it on) and the built-in agent does
//     not run (Options.Agent; a test binary runs it only in a network
//     namespace the test made).
//   - Logs go to the test log at warning level with -v, and nowhere
//     otherwise (Options.Logger).
//
// # Checks
//
// Stop, Restart and the cleanup of Start check that server.Stop returned
// nil, that every goroutine the server started has ended within a few
// seconds (the server starts under a pprof label of its own, which every
// goroutine it starts inherits, so parallel tests do not mix), and that
// the store file passes storetest.CheckFile. A failed check fails the test.
package servertest
