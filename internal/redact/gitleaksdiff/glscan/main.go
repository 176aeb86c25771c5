// Command glscan runs gitleaks v8.30.1's default rules through its library,
// for measurements beside fixrail's leak scan where no gitleaks binary is at
// hand (the module proxy holds the library, not the CLI's dependencies). It
// lives in the gitleaksdiff module, so gitleaks stays out of the main
// module and every fixrail binary.
//
//	glscan dir PATH [-r REPORT] [other gitleaks flags, ignored]
//
// is what the shared corpora's run.sh calls a gitleaks binary with: it scans
// PATH as `gitleaks dir` does (sources.Files, default config, decode depth
// 5) and writes the findings as gitleaks' JSON report, or to standard
// output without -r. `glscan dir --help` exits 0, so run.sh picks dir mode.
//
//	glscan sweep [-ext .go,.py] [-skip testdata,_test.go] ROOT...
//
// scans the files gatecheck sweep scans, one file at a time, and prints one
// line per finding: path, rule, "block", line; the last line, on standard
// error, counts files and bytes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
	"github.com/zricethezav/gitleaks/v8/sources"
)

func main() {
	logging.Logger = zerolog.Nop()
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "dir":
		os.Exit(dir(os.Args[2:]))
	case "sweep":
		os.Exit(sweep(os.Args[2:]))
	}
	usage()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: glscan dir PATH [-r REPORT] | glscan sweep [-ext .go] [-skip testdata] ROOT...")
	os.Exit(2)
}

func detector() *detect.Detector {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d.MaxDecodeDepth = 5 // the CLI's --max-decode-depth default
	return d
}

func dir(args []string) int {
	var path, reportPath string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--help" || a == "-h":
			fmt.Println("glscan dir PATH [-r REPORT]")
			return 0
		case a == "-r" || a == "--report-path":
			if i+1 < len(args) {
				reportPath = args[i+1]
				i++
			}
		case a == "-f" || a == "-l" || a == "--exit-code" || a == "--report-format" || a == "--log-level":
			i++ // a flag with a value run.sh passes; the report is JSON
		case strings.HasPrefix(a, "-"):
		default:
			path = a
		}
	}
	if path == "" {
		usage()
	}
	d := detector()
	cfg := d.Config
	findings, err := d.DetectSource(context.Background(), &sources.Files{
		Config: &cfg, Path: path, Sema: d.Sema, MaxArchiveDepth: d.MaxArchiveDepth,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if findings == nil {
		findings = []report.Finding{}
	}
	b, err := json.MarshalIndent(findings, "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if reportPath == "" {
		fmt.Println(string(b))
		return 0
	}
	if err := os.WriteFile(reportPath, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func sweep(args []string) int {
	fl := flag.NewFlagSet("sweep", flag.ContinueOnError)
	exts := fl.String("ext", "", "comma-separated name endings to scan (all files if empty)")
	skips := fl.String("skip", "", "comma-separated path parts to leave out")
	if err := fl.Parse(args); err != nil || fl.NArg() == 0 {
		usage()
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	extList, skipList := split(*exts), split(*skips)
	d := detector()
	files, bytes := 0, 0
	for _, root := range fl.Args() {
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			for _, s := range skipList {
				if strings.Contains(path, s) {
					if e.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
			}
			if !e.Type().IsRegular() || len(extList) > 0 && !hasSuffix(path, extList) {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			bytes += len(data)
			//lint:ignore SA1019 Detect takes a detect.Fragment in v8; sources.Fragment replaces it in v9
			for _, f := range d.Detect(detect.Fragment{Raw: string(data), FilePath: path}) {
				fmt.Printf("%s\t%s\tblock\tL%d\n", path, f.RuleID, f.StartLine)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
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
