package main

import (
	"testing"

	"github.com/fixrail/fixrail/internal/slimtest"
)

// The hook runs once per tool call, so what it links is start-up cost paid
// on every call and attack surface on the agent's every step.
var links = slimtest.Links{
	Allowed: []string{
		"github.com/fixrail/fixrail/cmd/fixrail-hook",
		"github.com/fixrail/fixrail/internal/cli/hookcmd",
		"github.com/fixrail/fixrail/internal/hook",
		"github.com/fixrail/fixrail/internal/policy",
		"github.com/fixrail/fixrail/internal/approval",
		"github.com/fixrail/fixrail/internal/receipt",
		"github.com/fixrail/fixrail/internal/redact",
		"github.com/fixrail/fixrail/internal/pathguard",
		"github.com/fixrail/fixrail/internal/untrusted", // pathguard refuses the characters it escapes
		"github.com/fixrail/fixrail/internal/hookstart", // one processor and one stack growth before every other init
		"mvdan.cc/sh/v3/",                            // the shell parser and expander
		"github.com/bmatcuk/doublestar/v4",           // policy's path globs
		"github.com/fixrail/fixrail/internal/fsname", // names compared as a Mac compares them
		"golang.org/x/text/unicode/norm",             // fsname's Unicode normalization (no init work)
		"golang.org/x/text/transform",                // norm's interface
	},
	// Never, whatever the allowlist says: the forge client, the model SDKs,
	// database drivers, the workflow linter, the network.
	Forbidden: []string{
		"github.com/google/go-github", "github.com/anthropics/", "github.com/openai/", "google.golang.org/genai",
		"modernc.org/sqlite", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx", "github.com/lib/pq",
		"github.com/rhysd/actionlint", "github.com/fixrail/fixrail/internal/pipeline", "github.com/fixrail/fixrail/internal/forge",
		"github.com/fixrail/fixrail/internal/runner", "net/http", "plugin",
		// Nor signature code: its initialisation costs every call, and
		// only a call with an approval waiting needs it; that call asks
		// the fixrail binary (hookcmd.ExecVerifier).
		"github.com/fixrail/fixrail/internal/approval/keys", "crypto/ecdsa", "crypto/rsa", "crypto/ed25519", "crypto/elliptic", "encoding/asn1",
	},
	ForbiddenExact: []string{"net"},
}

func TestDependencyAllowlist(t *testing.T) { slimtest.CheckDeps(t, "fixrail-hook", links) }

// The README's install command must build a statically linked hook. A
// plain go build links cgo through os/user (mvdan.cc/sh/v3/expand imports
// it for ~user) when a C compiler is present.
func TestREADMEInstallBuildsStaticHook(t *testing.T) { slimtest.CheckStaticInstall(t, "fixrail-hook") }
