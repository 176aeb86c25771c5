package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/sensitive"
)

// TestInitConfigIsAccepted: the fixrail.yaml init writes, for each kind of
// project it recognises, is accepted by the strict loader (unknown keys
// are refused there), and its deny-list manifest is paths.sensitive, which
// is what internal/sensitive is built from.
func TestInitConfigIsAccepted(t *testing.T) {
	for name, marker := range map[string]string{"go": "go.mod", "node": "package.json", "other": ""} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if marker != "" {
				if err := os.WriteFile(filepath.Join(dir, marker), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text := initConfig(dir)
			cfg, err := config.Parse(config.FileName, []byte(text))
			if err != nil {
				t.Fatalf("the loader refuses init's fixrail.yaml: %v\n%s", err, text)
			}
			if cfg.Paths.Sensitive == nil || len(cfg.Paths.Fixable) == 0 {
				t.Errorf("paths = %+v, want a fixable list and an (empty) sensitive manifest", cfg.Paths)
			}
			if _, err := sensitive.New(cfg.Paths.Fixable, cfg.Paths.Sensitive, cfg.Test.PathGlob); err != nil {
				t.Errorf("the deny-list policy refuses init's paths: %v", err)
			}
			for _, g := range sensitive.DenyGlobs {
				if !strings.Contains(text, "#   "+g+"\n") {
					t.Errorf("the comment does not list built-in deny glob %s", g)
				}
			}
		})
	}
}

// TestInitWorkflowIsClean keeps the reference workflow at zero findings.
func TestInitWorkflowIsClean(t *testing.T) {
	if fs := conformance.Lint("fixrail.yml", conformance.ReferenceWorkflow, conformance.Options{NoIgnores: true}); len(fs) > 0 {
		t.Errorf("the reference workflow has findings: %+v", fs)
	}
}
