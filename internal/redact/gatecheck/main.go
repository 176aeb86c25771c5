// Command gatecheck is a measurement stand-in for `fixrail redact --check`
// that counts only blocking findings. It is not part of the shipped binary;
// scripts/redact-peers runs it.
//
//	gatecheck [redact --check] [FILE|-]
//
// prints each blocking finding (rule and byte span, as the CLI does) and
// exits 5 when there is one, 0 when there is none; review findings are left
// out. The peers' run.sh can then measure the leak gate's precision.
//
//	gatecheck sweep [-ext .go,.py] [-skip testdata,_test.go] [-show] ROOT...
//
// scans every regular file under each ROOT whose name ends in one of -ext
// and whose path holds none of -skip, and prints one line per finding, both
// tiers: path, rule, tier (block or review), byte span; with -show, the
// matched text too (for reading false positives in public code: never use
// it on text that may hold a real secret). The last line, on standard
// error, counts files and bytes.
//
// Both read with no known values: the engine the CLI builds when no
// credential is in the environment. Each file is read as a stream
// (Engine.DetectReader), whatever its size.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/redact"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "sweep" {
		os.Exit(sweep(args[1:]))
	}
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
		fmt.Fprintln(os.Stderr, "usage: gatecheck [redact --check] [FILE|-] | gatecheck sweep [flags] ROOT...")
		os.Exit(2)
	}
	e, err := redact.New(redact.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	blocking := 0
	err = e.DetectReader(in, func(f redact.Finding) error {
		if f.Blocking() {
			blocking++
			fmt.Printf("%s\tbytes %d-%d\n", f.Rule, f.Start, f.End)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5) // fail closed, as the gate does
	}
	if blocking > 0 {
		os.Exit(5)
	}
}

func sweep(args []string) int {
	fl := flag.NewFlagSet("sweep", flag.ContinueOnError)
	exts := fl.String("ext", "", "comma-separated name endings to scan (all files if empty)")
	skips := fl.String("skip", "", "comma-separated path parts to leave out (testdata, _test.go)")
	show := fl.Bool("show", false, "print the matched text (public code only)")
	if err := fl.Parse(args); err != nil || fl.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gatecheck sweep [-ext .go,.py] [-skip testdata,_test.go] [-show] ROOT...")
		return 2
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	extList, skipList := split(*exts), split(*skips)
	e, err := redact.New(redact.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	files, bytes := 0, int64(0)
	for _, root := range fl.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			for _, s := range skipList {
				if strings.Contains(path, s) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
			}
			if !d.Type().IsRegular() || len(extList) > 0 && !hasSuffix(path, extList) {
				return nil
			}
			var data []byte
			if *show {
				data, err = os.ReadFile(path)
				if err != nil {
					return err
				}
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			cr := &countReader{r: f}
			err = e.DetectReader(cr, func(f redact.Finding) error {
				tier := "block"
				if !f.Blocking() {
					tier = "review"
				}
				fmt.Fprintf(out, "%s\t%s\t%s\t%d-%d", path, f.Rule, tier, f.Start, f.End)
				if *show && f.End <= len(data) {
					fmt.Fprintf(out, "\t%q", excerpt(data, f.Start, f.End))
				}
				fmt.Fprintln(out)
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			files++
			bytes += cr.n
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipAll) {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	out.Flush()
	fmt.Fprintf(os.Stderr, "files %d bytes %d\n", files, bytes)
	return 0
}

func hasSuffix(path string, exts []string) bool {
	for _, x := range exts {
		if strings.HasSuffix(path, x) {
			return true
		}
	}
	return false
}

// excerpt is the finding with up to 40 bytes of its line on each side.
func excerpt(data []byte, start, end int) string {
	lo, hi := max(0, start-40), min(len(data), end+40)
	if i := strings.LastIndexByte(string(data[lo:start]), '\n'); i >= 0 {
		lo += i + 1
	}
	if i := strings.IndexByte(string(data[end:hi]), '\n'); i >= 0 {
		hi = end + i
	}
	return string(data[lo:start]) + "»" + string(data[start:min(end, start+200)]) + "«" + string(data[end:hi])
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
