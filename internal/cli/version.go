package cli

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
)

var cmdVersion = &command{
	Name:  "version",
	Usage: "[--json]",
	Short: "print fixrail's version",
	Long: `
Version prints the module version fixrail was built from, the VCS revision
it was built at (with "+dirty" when the work tree had uncommitted changes)
and the Go version. A binary built with go install MODULE@VERSION knows its
version; one built from a checkout knows its revision when the build
stamped it (README's install command asks for that with -buildvcs=true);
what the binary does not know is said, not guessed.`,
	Flags: func() *flag.FlagSet { fs, _ := versionFlags(); return fs },
	Run: func(_ context.Context, stdio Stdio, args []string) error {
		fs, asJSON := versionFlags()
		if err := parseFlags(fs, stdio, args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef("version takes no arguments")
		}
		bi, _ := debug.ReadBuildInfo()
		v := versionOf(bi)
		if *asJSON {
			return writeJSON(stdio.Stdout, v)
		}
		fmt.Fprintln(stdio.Stdout, v)
		return nil
	},
}

func versionFlags() (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the version as JSON")
	return fs, asJSON
}

// buildVersion is what a binary knows of its own build.
type buildVersion struct {
	// Module is the main module's version; "" when the build did not know
	// it (a build from a checkout reports "(devel)").
	Module   string `json:"module,omitempty"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Dirty    bool   `json:"dirty,omitempty"`
	Go       string `json:"go"`
}

func versionOf(bi *debug.BuildInfo) buildVersion {
	var v buildVersion
	if bi == nil {
		return buildVersion{Go: "unknown"}
	}
	v.Go = bi.GoVersion
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		v.Module = m
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

func (v buildVersion) String() string {
	s := "fixrail "
	if v.Module != "" {
		s += v.Module
	} else {
		s += "(no module version)"
	}
	switch {
	case v.Revision != "":
		s += " revision " + v.Revision
		if v.Dirty {
			s += "+dirty"
		}
		if v.Time != "" {
			s += " (" + v.Time + ")"
		}
	case v.Module == "":
		s += " (no VCS revision stamped: built outside a git checkout or with -buildvcs=false)"
	}
	return s + " " + v.Go
}
