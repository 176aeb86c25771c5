package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

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

// TestInitWorkflowIsClean keeps both reference workflows at zero findings.
func TestInitWorkflowIsClean(t *testing.T) {
	for name, wf := range map[string][]byte{"fixrail.yml": conformance.ReferenceWorkflow, "fixrail-alerts.yml": conformance.AlertsWorkflow} {
		if fs := conformance.Lint(name, wf, conformance.Options{NoIgnores: true}); len(fs) > 0 {
			t.Errorf("the reference workflow %s has findings: %+v", name, fs)
		}
	}
}

// TestInitWorkflowsCheckOutFirst: every fixrail step of a reference
// workflow but its install runs in the checkout (budget check and run read
// the clone's fixrail.yaml and ledger; on a fresh runner the workspace is
// empty until actions/checkout), and the budget precheck comes before run.
func TestInitWorkflowsCheckOutFirst(t *testing.T) {
	for name, wf := range map[string][]byte{"fixrail.yml": conformance.ReferenceWorkflow, "fixrail-alerts.yml": conformance.AlertsWorkflow} {
		var doc struct {
			Jobs map[string]struct {
				Steps []struct {
					Name string `yaml:"name"`
					Uses string `yaml:"uses"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(wf, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for job, j := range doc.Jobs {
			checkout, budget, run := -1, -1, -1
			for i, s := range j.Steps {
				switch {
				case strings.HasPrefix(s.Uses, "actions/checkout@"):
					checkout = i
				case strings.HasPrefix(s.Run, "fixrail budget check "):
					budget = i
				case strings.HasPrefix(s.Run, "fixrail run "):
					run = i
				case strings.Contains(s.Run, "fixrail") && s.Name != "Install fixrail":
					t.Errorf("%s job %s: step %d runs fixrail in a way this test does not know: %q", name, job, i, s.Run)
				}
			}
			if checkout < 0 || budget < 0 || run < 0 {
				t.Fatalf("%s job %s: checkout %d, budget check %d, run %d: a step is missing", name, job, checkout, budget, run)
			}
			if !(checkout < budget && budget < run) {
				t.Errorf("%s job %s: checkout at step %d, budget check at %d, run at %d; want checkout, then budget check, then run", name, job, checkout, budget, run)
			}
		}
	}
}

// TestInitPinsItself: the workflows init writes install the fixrail that
// wrote them — its module version, else its commit — and one that knows
// neither leaves FIXRAIL_VERSION empty, which the install step refuses.
func TestInitPinsItself(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bi        *debug.BuildInfo
		pin       string
		wantDirty bool
	}{
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0", false},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130100000-0123456789ab"}}, "v0.0.0-20261130100000-0123456789ab", false},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}}}, "0123456789abcdef0123456789abcdef01234567", false},
		{"dirty checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}}, "0123456789abcdef0123456789abcdef01234567", true},
		{"unknown", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", false},
		{"no build info", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pin, dirty := selfPin(tc.bi)
			if pin != tc.pin || dirty != tc.wantDirty {
				t.Fatalf("selfPin = %q, %v; want %q, %v", pin, dirty, tc.pin, tc.wantDirty)
			}
			for name, wf := range map[string][]byte{"fixrail.yml": conformance.ReferenceWorkflow, "fixrail-alerts.yml": conformance.AlertsWorkflow} {
				out := string(pinWorkflow(wf, pin))
				if want := "FIXRAIL_VERSION: \"" + tc.pin + "\"\n"; !strings.Contains(out, want) || strings.Contains(out, pinPlaceholder) {
					t.Errorf("%s: want %q and no placeholder", name, want)
				}
				if fs := conformance.Lint(name, []byte(out), conformance.Options{NoIgnores: true}); len(fs) > 0 {
					t.Errorf("%s pinned to %q has findings: %+v", name, pin, fs)
				}
			}
		})
	}
}
