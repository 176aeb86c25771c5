// Command gatecheck is a measurement stand-in for `fixrail redact --check`
// that counts only blocking findings: it prints each blocking finding (rule
// and byte span, as the CLI does) and exits 5 when there is one, 0 when
// there is none; review findings are left out. The peers' run.sh can then measure the
// leak gate's precision (scripts/redact-peers runs it both ways). It reads
// FILE, or standard input for - or no argument, with no known values: the
// same engine the CLI builds when no credential is in the environment. It
// is not part of the shipped binary.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/fixrail/fixrail/internal/redact"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "redact" {
		args = args[1:] // accept run.sh's `FIXRAIL redact --check FILE`
	}
	if len(args) > 0 && args[0] == "--check" {
		args = args[1:]
	}
	in := io.Reader(os.Stdin)
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		in = f
	} else if len(args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: gatecheck [redact --check] [FILE|-]")
		os.Exit(2)
	}
	data, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	e, err := redact.New(redact.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fs, err := e.Detect(string(data))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5) // fail closed, as the gate does
	}
	blocking := 0
	for _, f := range fs {
		if f.Blocking() {
			blocking++
			fmt.Printf("%s\tbytes %d-%d\n", f.Rule, f.Start, f.End)
		}
	}
	if blocking > 0 {
		os.Exit(5)
	}
}
