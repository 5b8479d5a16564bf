// Command prototables writes Skiff's protobuf field tables (run by go
// generate in apiserver/protobuf):
//
//	go run ./cmd/prototables -o ../../apiserver/protobuf/tables.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/skiff-dev/skiff/test/kubectl-compat/internal/prototables"
)

func main() {
	out := flag.String("o", "", "output file (default stdout)")
	flag.Parse()
	src, err := prototables.Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "prototables:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(src)
		return
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "prototables:", err)
		os.Exit(1)
	}
}
