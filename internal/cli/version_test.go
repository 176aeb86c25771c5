package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install at a version", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}},
			"fixrail v0.4.0 go1.26.8"},
		{"a pseudo-version with its revision", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261204120000-0123456789ab"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-04T12:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"fixrail v0.0.0-20261204120000-0123456789ab revision " + rev + " (2026-12-04T12:00:00Z) go1.26.8"},
		{"a checkout build with uncommitted changes", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}},
			"fixrail (no module version) revision " + rev + "+dirty go1.26.8"},
		{"nothing stamped", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"fixrail (no module version) (no VCS revision stamped: built outside a git checkout or with -buildvcs=false) go1.26.8"},
		{"no build info", nil, "fixrail (no module version) (no VCS revision stamped: built outside a git checkout or with -buildvcs=false) unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(tc.bi).String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
