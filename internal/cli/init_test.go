package cli

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"go.yaml.in/yaml/v3"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/sensitive"
)

// TestInitConfigIsAccepted: the fixrail.yaml init writes, for each kind of
// project it recognises, is accepted by the strict loader (unknown keys
// are refused there), its test section is an oracle the bug type accepts,
// and its deny-list manifest is paths.sensitive, which is what
// internal/sensitive is built from.
func TestInitConfigIsAccepted(t *testing.T) {
	for name, files := range map[string][]string{
		"go":     {"go.mod", "abs.go", "calc/calc.go"},
		"node":   {"package.json", "src/index.js"},
		"python": {"pyproject.toml", "src/app/__init__.py", "tests/conftest.py"},
		"odd":    {"go.mod", "we[ir]d*/x.go"},
		"other":  {"README.md"},
	} {
		t.Run(name, func(t *testing.T) {
			text := initConfig(detectLayout(files, func(string) []byte { return nil }))
			cfg, err := config.Parse(config.FileName, []byte(text))
			if err != nil {
				t.Fatalf("the loader refuses init's fixrail.yaml: %v\n%s", err, text)
			}
			if cfg.Paths.Sensitive == nil || cfg.Paths.Fixable == nil {
				t.Errorf("paths = %+v, want a fixable list and an (empty) sensitive manifest", cfg.Paths)
			}
			if _, err := sensitive.New(cfg.Paths.Fixable, cfg.Paths.Sensitive, cfg.Test.PathGlob); err != nil {
				t.Errorf("the deny-list policy refuses init's paths: %v", err)
			}
			if err := fixtype.Bug.Check(cfg); err != nil {
				t.Errorf("the bug type refuses init's test section: %v", err)
			}
			for _, g := range sensitive.DenyGlobs {
				if !strings.Contains(text, "#   "+g+"\n") {
					t.Errorf("the comment does not list built-in deny glob %s", g)
				}
			}
		})
	}
}

// TestDetectLayout: paths.fixable is what the tracked files hold — a Go
// package at the root, each top-level directory of code, src/, lib/,
// packages/* — never a directory that does not exist, vendored code or
// tooling; the test and suite commands are the ecosystem's.
func TestDetectLayout(t *testing.T) {
	type want struct {
		eco      string
		fixable  []string
		test     string
		glob     string
		suite    string
		noteLike string
	}
	for _, tc := range []struct {
		name  string
		files []string
		read  map[string]string
		want  want
	}{
		{"go module at the root", []string{"go.mod", "go.sum", "abs.go", "abs_test.go", "README.md"},
			nil, want{"go", []string{"*.go"}, "go test -count=1 -run ^{test_name}$ ./{test_dir}", "{**/*_test.go,**/testdata/**}", "go test -count=1 ./...", ""}},
		{"go cmd internal pkg", []string{"go.mod", "cmd/tool/main.go", "internal/a/a.go", "pkg/b/b.go", "docs/x.md"},
			nil, want{"go", []string{"cmd/**", "internal/**", "pkg/**"}, "", "", "", ""}},
		{"go root and packages, vendor and testdata skipped", []string{"go.mod", "main.go", "calc/calc.go", "vendor/x/x.go", "testdata/t.go", ".hidden/h.go", "_tools/t.go"},
			nil, want{"go", []string{"*.go", "calc/**"}, "", "", "", ""}},
		{"go only tests at the root", []string{"go.mod", "x_test.go"},
			nil, want{"go", nil, "", "", "", "paths.fixable is empty"}},
		{"go nested module", []string{"go.mod", "a.go", "tools/go.mod", "tools/t.go"},
			nil, want{"go", []string{"*.go"}, "", "", "", "tools/ is a module of its own"}},
		{"go beside package.json", []string{"go.mod", "a.go", "package.json", "web/app.js"},
			nil, want{"go", []string{"*.go"}, "", "", "", "also tracked: package.json"}},
		{"go glob metacharacters", []string{"go.mod", "a[1]/x.go"},
			nil, want{"go", []string{`a\[1\]/**`}, "", "", "", ""}},
		{"python src layout with conftest", []string{"pyproject.toml", "src/shout/__init__.py", "tests/conftest.py", "tests/test_a.py"},
			nil, want{"python", []string{"src/**"}, "python3 -m pytest -q {test_path}", "tests/**", "python3 -m pytest -q", ""}},
		{"python pytest named in pyproject", []string{"pyproject.toml", "pkg/__init__.py", "pkg/m.py", "test/test_m.py"},
			map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n"}, want{"python", []string{"pkg/**"}, "python3 -m pytest -q {test_path}", "test/**", "", ""}},
		{"python unittest, root modules, tooling skipped", []string{"setup.py", "conftest_not.txt", "calc.py", "noxfile.py", "scripts/run.py", "docs/conf.py"},
			nil, want{"python", []string{"calc.py"}, "python3 -m unittest {test_path}", "tests/**", "python3 -m unittest discover -s tests -t .", "use unittest"}},
		{"python lib and a package, tests dir never fixable", []string{"requirements.txt", "lib/util.py", "app/__init__.py", "tests/__init__.py", "tests/test_x.py"},
			map[string]string{"requirements.txt": "pytest==8\n"}, want{"python", []string{"app/**", "lib/**"}, "python3 -m pytest -q {test_path}", "tests/**", "", ""}},
		{"npm src and lib, node --test", []string{"package.json", "src/a.js", "lib/b.mjs", "test/a.test.js"},
			map[string]string{"package.json": `{"scripts": {"test": "node --test"}}`}, want{"npm", []string{"src/**", "lib/**"}, "node --test {test_path}", "test/**", "npm test", ""}},
		{"npm root package, config files skipped", []string{"package.json", "index.js", "eslint.config.js", ".prettierrc.js", "jest.config.ts", "README.md"},
			map[string]string{"package.json": `{"devDependencies": {"jest": "^29"}, "scripts": {"test": "jest"}}`}, want{"npm", []string{"index.js"}, "npx --no-install jest {test_path}", "test/**", "npm test", ""}},
		{"npm workspace", []string{"package.json", "packages/a/src/x.ts", "packages/b/src/y.ts", "packages/b/package.json"},
			map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, want{"npm", []string{"packages/*/src/**"}, "node --test {test_path}", "", "node --test", "no test script"}},
		{"npm workspace without src", []string{"package.json", "packages/a/index.js"},
			map[string]string{"package.json": `{"devDependencies": {"vitest": "1"}}`}, want{"npm", []string{"packages/**"}, "npx --no-install vitest run {test_path}", "", "node --test", "no test script"}},
		{"npm unreadable package.json", []string{"package.json", "src/a.js"},
			map[string]string{"package.json": "{"}, want{"npm", []string{"src/**"}, "node --test {test_path}", "", "", "could not be read as JSON"}},
		{"nothing recognised", []string{"README.md", "docs/a.md"},
			nil, want{"", nil, "python3 -m pytest -q {test_path}", "", "", "no go.mod, package.json or Python project"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := detectLayout(tc.files, func(p string) []byte {
				if s, ok := tc.read[p]; ok {
					return []byte(s)
				}
				return nil
			})
			if l.Ecosystem != tc.want.eco {
				t.Errorf("ecosystem %q, want %q", l.Ecosystem, tc.want.eco)
			}
			if !slices.Equal(l.Fixable, tc.want.fixable) {
				t.Errorf("fixable %q, want %q", l.Fixable, tc.want.fixable)
			}
			for _, c := range []struct{ what, got, want string }{
				{"test", strings.Join(l.Test, " "), tc.want.test},
				{"path_glob", l.TestGlob, tc.want.glob},
				{"suite", strings.Join(l.Suite, " "), tc.want.suite},
			} {
				if c.want != "" && c.got != c.want {
					t.Errorf("%s %q, want %q", c.what, c.got, c.want)
				}
			}
			notes := strings.Join(l.Notes, "\n")
			if tc.want.noteLike != "" && !strings.Contains(notes, tc.want.noteLike) {
				t.Errorf("notes %q, want one saying %q", notes, tc.want.noteLike)
			}
			if tc.want.noteLike == "" && notes != "" {
				t.Errorf("unexpected notes %q", notes)
			}
			// Every glob matches a tracked file: nothing is guessed.
			for _, g := range l.Fixable {
				if !slices.ContainsFunc(tc.files, func(f string) bool { ok, _ := doublestar.Match(g, f); return ok }) {
					t.Errorf("fixable glob %q matches no tracked file", g)
				}
			}
		})
	}
}

// TestInitWorkflowIsClean keeps both reference workflows at zero findings.
// referenceWorkflows are every workflow init writes.
var referenceWorkflows = map[string][]byte{"fixrail.yml": conformance.ReferenceWorkflow, "fixrail-alerts.yml": conformance.AlertsWorkflow, "fixrail-verify.yml": conformance.VerifyWorkflow, "fixrail-sweep.yml": conformance.SweepWorkflow}

func TestInitWorkflowIsClean(t *testing.T) {
	for name, wf := range referenceWorkflows {
		if fs := conformance.Lint(name, wf, conformance.Options{NoIgnores: true}); len(fs) > 0 {
			t.Errorf("the reference workflow %s has findings: %+v", name, fs)
		}
	}
}

// TestInitWorkflowsCheckOutFirst: every fixrail step of a reference
// workflow but its install runs in the checkout (budget check and run read
// the clone's fixrail.yaml and ledger; on a fresh runner the workspace is
// empty until actions/checkout), and the budget precheck comes before run.
// The verify workflow runs no agent: checkout, then fixrail verify.
func TestInitWorkflowsCheckOutFirst(t *testing.T) {
	for name, wf := range referenceWorkflows {
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
			checkout, budget, run, verify, scan := -1, -1, -1, -1, -1
			for i, s := range j.Steps {
				switch {
				case strings.HasPrefix(s.Uses, "actions/checkout@"):
					checkout = i
				case strings.HasPrefix(s.Run, "fixrail verify "):
					verify = i
				case strings.HasPrefix(s.Run, "fixrail budget check "):
					budget = i
				case strings.HasPrefix(s.Run, "fixrail run "):
					run = i
				case strings.Contains(s.Run, "$(fixrail scan "):
					scan = i
				case strings.Contains(s.Run, "fixrail") && s.Name != "Install fixrail":
					t.Errorf("%s job %s: step %d runs fixrail in a way this test does not know: %q", name, job, i, s.Run)
				}
			}
			if name == "fixrail-verify.yml" {
				if checkout < 0 || verify < checkout || budget >= 0 || run >= 0 {
					t.Errorf("%s job %s: checkout %d, verify %d, budget %d, run %d: want checkout, then verify, and no run", name, job, checkout, verify, budget, run)
				}
				continue
			}
			if scan >= 0 {
				// The sweep's scan job reads the API only: no run, no budget.
				if budget >= 0 || run >= 0 {
					t.Errorf("%s job %s: scan %d with budget %d, run %d: a scan job runs no finding", name, job, scan, budget, run)
				}
				continue
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
			for name, wf := range referenceWorkflows {
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
