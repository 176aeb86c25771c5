package main

import (
	"testing"

	"github.com/fixrail/fixrail/internal/slimtest"
)

// fixrail-resolve exists for its start-up: what it links beyond the decision
// is paid on every package a per-package caller asks about.
var links = slimtest.Links{
	Allowed: []string{
		"github.com/fixrail/fixrail/cmd/fixrail-resolve",
		"github.com/fixrail/fixrail/internal/cli/resolvecmd",
		"github.com/fixrail/fixrail/internal/cve",
		"github.com/fixrail/fixrail/internal/vulndata",
		"github.com/fixrail/fixrail/internal/manifest", // the decision's ecosystem rules live with the manifests
		"github.com/fixrail/fixrail/internal/findings", // --vuln's finding files
		"github.com/fixrail/fixrail/internal/sarif",
		"github.com/fixrail/fixrail/internal/pathguard",
		"github.com/fixrail/fixrail/internal/untrusted",
		"deps.dev/util/semver",       // version order per ecosystem
		"golang.org/x/mod/",          // Go versions, go.mod
		"github.com/BurntSushi/toml", // Cargo.toml, pyproject.toml
		"github.com/BurntSushi/toml/internal",
	},
	// Never: the pipeline and what only a run needs, the forge, the
	// ledger's database drivers, the model SDKs, the hook, the linter.
	Forbidden: []string{
		"github.com/fixrail/fixrail/internal/pipeline", "github.com/fixrail/fixrail/internal/runner",
		"github.com/fixrail/fixrail/internal/forge", "github.com/fixrail/fixrail/internal/ledger",
		"github.com/fixrail/fixrail/internal/hook", "github.com/fixrail/fixrail/internal/sandbox",
		"github.com/google/go-github", "github.com/anthropics/", "github.com/openai/", "google.golang.org/genai",
		"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/rhysd/actionlint", "mvdan.cc/sh/v3", "plugin",
	},
}

func TestDependencyAllowlist(t *testing.T) { slimtest.CheckDeps(t, "fixrail-resolve", links) }

// Static: a cgo build (the net package's resolver) measured about 2 ms
// slower per call than the static one (scripts/bench-resolve-version).
func TestREADMEInstallBuildsStaticResolve(t *testing.T) {
	slimtest.CheckStaticInstall(t, "fixrail-resolve")
}
