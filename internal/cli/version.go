package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

var cmdVersion = &command{
	Name:  "version",
	Short: "print fixrail's version",
	Long:  "Version prints the module version fixrail was built from and the Go version.",
	Run: func(_ context.Context, stdio Stdio, args []string) error {
		if len(args) > 0 {
			return usagef("version takes no arguments")
		}
		v, gov := "(devel)", "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			gov = bi.GoVersion
			if bi.Main.Version != "" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += " " + s.Value[:12]
				}
			}
		}
		fmt.Fprintf(stdio.Stdout, "fixrail %s %s\n", v, gov)
		return nil
	},
}
