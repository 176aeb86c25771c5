package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/gitx"
)

// demoScanned lays out examples/scanned under root — a Go service with a
// gosec finding and a committed key, generated here so no credential
// sits in the bundle — and runs the sast or the secret finding through
// the pipeline, with the scripted stand-in agent. gosec, when installed,
// is the sast oracle (named by its absolute path, bound read-only in the
// sandbox); without it the sast demo shows the needs-review path.
func demoScanned(ctx context.Context, stdio Stdio, root string, o *demoOpts) error {
	ar, err := copyExample(root, "scanned")
	if err != nil {
		return err
	}
	key := demoKey()
	agent := filepath.Join(root, "agent", "scripted_agent.py")
	gosec, gosecErr := exec.LookPath("gosec")
	repoDir := filepath.Join(root, "repo")
	err = writeTxtar(ar, repoDir, func(rel string, b []byte) []byte {
		data := strings.ReplaceAll(strings.ReplaceAll(string(b), "@KEY@", key), "@AGENT@", agent)
		if rel == "fixrail.yaml" && gosecErr == nil {
			data += fmt.Sprintf("scanners:\n  - name: gosec\n    command: [%q, \"-no-fail\", \"-fmt\", \"sarif\", \"-out\", \"{sarif}\", \"{dirs}\"]\n    tools: [\"gosec\"]\n    fix_type: sast\n    timeout: 5m\n", gosec)
		}
		return []byte(data)
	})
	if err != nil {
		return err
	}
	if _, err := gitx.Init(ctx, repoDir, "main", gitx.Identity{Name: "fixrail demo", Email: "demo@localhost"}, "shop: initial import"); err != nil {
		return fmt.Errorf("demo repository: %w", err)
	}
	fmt.Fprintf(stdio.Stderr, "fixrail demo: repository %s (kept; remove it when done)\n", repoDir)
	var fin *findings.Finding
	if o.sast {
		if gosecErr != nil {
			fmt.Fprintln(stdio.Stderr, "fixrail demo: gosec is not on PATH, so no scanner can judge the finding: watch the needs-review path (install gosec, e.g. with scripts/install-scanners, to watch its red and green)")
		}
		if fin, err = findings.ReadFile(filepath.Join(root, "sast.json")); err != nil {
			return err
		}
	} else {
		// The finding names the key by its digest only: the harness
		// recovers the value from the tree.
		sum := sha256.Sum256([]byte(key))
		fin = &findings.Finding{ID: "demo-key", Title: "committed API key in shop/client.go", FixType: "secret",
			Evidence: &findings.Evidence{Path: "shop/client.go", Line: 5, Rule: "generic-api-key", Tool: "gitleaks", SecretSHA256: hex.EncodeToString(sum[:])}}
	}
	return demoRun(ctx, stdio, repoDir, fin, nil, o)
}

// demoKey is a synthetic key, random for each demo, never a literal.
func demoKey() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return "sk_" + "demo_" + hex.EncodeToString(b)
}
