package cli

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sensitive"
)

var cmdInit = &command{
	Name:  "init",
	Usage: "[--dir DIR] [--force]",
	Short: "write fixrail.yaml (with the deny-list manifest) and the reference CI workflow",
	Long: `
Init writes three files into the repository at --dir (default: the current
directory):

  fixrail.yaml                  the configuration, commented; paths.sensitive
                                in it is the deny-list manifest (the globs
                                that extend the built-in deny list, which the
                                comment lists)
  .github/workflows/fixrail.yml the reference workflow: label-triggered, one
                                run per issue, least privilege, a fail-closed
                                budget precheck, fixrail run as the hard leg
  .github/workflows/fixrail-alerts.yml
                                the same envelope for Dependabot alerts: one
                                run per alert (fixrail run --alert N)

The test and suite commands are guessed from go.mod or package.json
(otherwise pytest); edit them. Both workflows pass fixrail lint with zero
findings. Existing files are never overwritten without --force; nothing is
written unless every file can be.`,
	Flags: func() *flag.FlagSet { fs, _ := initFlags(); return fs },
	Run:   runInit,
}

//go:embed initdata/fixrail.yaml
var initConfigTemplate string

type initOpts struct {
	dir   string
	force bool
}

func initFlags() (*flag.FlagSet, *initOpts) {
	o := &initOpts{}
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".", "the repository `root` to write into")
	fs.BoolVar(&o.force, "force", false, "overwrite files that exist")
	return fs, o
}

// initConfig renders fixrail.yaml for the project in dir.
func initConfig(dir string) string {
	test, glob, suite, fixable := `["python3", "-m", "pytest", "{test_path}"]`, "tests/**", `["python3", "-m", "pytest"]`, `["src/**"]`
	if isFile(filepath.Join(dir, "go.mod")) {
		test, glob, suite, fixable = `["go", "test", "-run", "{test_name}", "./..."]`, "**/*_test.go", `["go", "test", "./..."]`, `["cmd/**", "internal/**", "pkg/**"]`
	} else if isFile(filepath.Join(dir, "package.json")) {
		test, glob, suite, fixable = `["npx", "--no-install", "jest", "{test_path}"]`, "test/**", `["npm", "test"]`, `["src/**", "lib/**"]`
	}
	var b strings.Builder
	for _, g := range sensitive.DenyGlobs {
		fmt.Fprintf(&b, "  #   %s\n", g)
	}
	fmt.Fprintf(&b, "  #   and any path segment naming: %s", strings.Join(sensitive.DenyWords, ", "))
	return strings.NewReplacer("@TEST@", test, "@TESTGLOB@", glob, "@SUITE@", suite, "@FIXABLE@", fixable, "@BUILTIN@", b.String()).Replace(initConfigTemplate)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func runInit(_ context.Context, stdio Stdio, args []string) error {
	flags, o := initFlags()
	if err := parseFlags(flags, stdio, args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usagef("init takes no arguments (use --dir)")
	}
	cfg := initConfig(o.dir)
	// What init writes, the loader must accept: checked before writing.
	if _, err := config.Parse(config.FileName, []byte(cfg)); err != nil {
		return fmt.Errorf("the fixrail.yaml init would write is refused by the loader: %w", err)
	}
	bi, _ := debug.ReadBuildInfo()
	pin, dirty := selfPin(bi)
	files := []struct {
		rel  string
		data []byte
	}{
		{config.FileName, []byte(cfg)},
		{filepath.Join(".github", "workflows", "fixrail.yml"), pinWorkflow(conformance.ReferenceWorkflow, pin)},
		{filepath.Join(".github", "workflows", "fixrail-alerts.yml"), pinWorkflow(conformance.AlertsWorkflow, pin)},
	}
	// A directory on the way that is a symbolic link (a committed
	// .github/workflows -> ../../elsewhere) would put the files wherever it
	// points: refused before anything is written.
	for _, f := range files {
		if bad := linkOnTheWay(o.dir, filepath.Dir(f.rel)); bad != "" {
			return usagef("%s is a symbolic link or not a directory: init writes only into real directories beneath %s; nothing written", filepath.ToSlash(bad), o.dir)
		}
	}
	if !o.force {
		var exist []string
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(o.dir, f.rel)); err == nil {
				exist = append(exist, f.rel)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if len(exist) > 0 {
			return usagef("%s already exist(s); nothing written (use --force to overwrite)", strings.Join(exist, ", "))
		}
	}
	for _, f := range files {
		// Beneath --dir, through real directories only; a link at the file
		// itself is replaced, never followed.
		if err := pathguard.WriteBeneath(o.dir, filepath.ToSlash(f.rel), f.data, 0o644, true); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Stdout, "wrote %s\n", filepath.ToSlash(f.rel))
	}
	switch {
	case pin == "":
		fmt.Fprintln(stdio.Stderr, "fixrail init: this fixrail knows neither its version nor its commit: set FIXRAIL_VERSION in the workflows to the version or commit you reviewed (their install step stops until you do)")
	case dirty:
		fmt.Fprintf(stdio.Stderr, "fixrail init: the workflows pin commit %s, but this fixrail was built with uncommitted changes: pin what you reviewed\n", pin)
	}
	fmt.Fprintln(stdio.Stdout, "next: edit test and suite in fixrail.yaml, add your sensitive paths, then run fixrail lint")
	return nil
}

// linkOnTheWay returns the first existing component of rel beneath root
// that is not a real directory (a symbolic link, a file), or "".
func linkOnTheWay(root, rel string) string {
	at := ""
	for _, name := range strings.Split(filepath.ToSlash(rel), "/") {
		if name == "." || name == "" {
			continue
		}
		at = filepath.Join(at, name)
		fi, err := os.Lstat(filepath.Join(root, at))
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil || !fi.IsDir() {
			return at
		}
	}
	return ""
}
