package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const valid = `
runner:  {kind: command, command: ["./agent.sh"], timeout: 10m, max_turns: 40}
test:    {command: ["python3", "-m", "pytest", "-q", "{test_path}"], path_glob: "tests/**"}
suite:   {command: ["python3", "-m", "pytest", "-q"]}
paths:   {fixable: ["src/**", "lib/**"], sensitive: []}
budget:  {max_diff_lines: 200, wall_clock: 30m}
mode: autonomous
`

func TestParseValid(t *testing.T) {
	got, err := Parse("fixrail.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Runner:    Runner{Kind: "command", Command: []string{"./agent.sh"}, Timeout: 10 * time.Minute, MaxTurns: 40},
		Test:      Test{Command: []string{"python3", "-m", "pytest", "-q", "{test_path}"}, PathGlob: "tests/**", Timeout: 5 * time.Minute},
		Suite:     Suite{Command: []string{"python3", "-m", "pytest", "-q"}, Timeout: 15 * time.Minute},
		Paths:     Paths{Fixable: []string{"src/**", "lib/**"}, Sensitive: []string{}},
		Budget:    defaults().Budget,
		Untrusted: Untrusted{FieldCap: 4096},
		Forge:     Forge{CIWait: DefaultCIWait},
		Recheck:   Recheck{OnFailure: RecheckEscalate},
		Sandbox:   "auto",
		Mode:      Autonomous,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
}

// TestBudgetBytesDefaults pins the byte budget's defaults, which README
// explains, and that the file can set them.
func TestBudgetBytesDefaults(t *testing.T) {
	got, err := Parse("fixrail.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if got.Budget.MaxDiffBytes != 32768 || got.Budget.MaxLineBytes != 500 {
		t.Errorf("defaults: max_diff_bytes %d, max_line_bytes %d; want 32768, 500", got.Budget.MaxDiffBytes, got.Budget.MaxLineBytes)
	}
	got, err = Parse("fixrail.yaml", []byte(strings.Replace(valid, "max_diff_lines: 200", "max_diff_lines: 200, max_diff_bytes: 4096, max_line_bytes: 120", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Budget.MaxDiffBytes != 4096 || got.Budget.MaxLineBytes != 120 {
		t.Errorf("set: max_diff_bytes %d, max_line_bytes %d; want 4096, 120", got.Budget.MaxDiffBytes, got.Budget.MaxLineBytes)
	}
}

// TestParseScanners: an entry keeps what it says, gets the default
// timeout, and answers for its tools without regard to case.
func TestParseScanners(t *testing.T) {
	got, err := Parse("fixrail.yaml", []byte(valid+`scanners: [{name: gosec, command: [gosec, -fmt, sarif, -out, "{sarif}", "{paths}"], tools: [gosec], fix_type: sast}]`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Scanner{{Name: "gosec", Command: []string{"gosec", "-fmt", "sarif", "-out", "{sarif}", "{paths}"}, Timeout: DefaultScannerTimeout, Tools: []string{"gosec"}, FixType: "sast"}}
	if d := cmp.Diff(want, got.Scanners); d != "" {
		t.Errorf("scanners (-want +got):\n%s", d)
	}
	if s := got.ScannerFor("GoSec"); s == nil || s.Name != "gosec" {
		t.Errorf("ScannerFor(GoSec) = %v", s)
	}
	if s := got.ScannerFor("semgrep"); s != nil {
		t.Errorf("ScannerFor(semgrep) = %v, want nil", s)
	}
}

func TestParseForge(t *testing.T) {
	got, err := Parse("fixrail.yaml", []byte(valid+"forge: {ci_wait: 5m, required_checks: [test, lint]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Forge.CIWait != 5*time.Minute || len(got.Forge.RequiredChecks) != 2 || got.Forge.RequiredChecks[1] != "lint" {
		t.Errorf("forge = %+v", got.Forge)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top key", valid + "modes: x\n", `fixrail.yaml:8: unknown key "modes" at top level`},
		{"unknown nested key", strings.Replace(valid, "max_turns: 40", "max_turn: 40", 1), `fixrail.yaml:2: unknown key "max_turn" in runner`},
		{"empty", "", "fixrail.yaml: file is empty"},
		{"not a mapping", "- a\n- b\n", "top level must be a mapping"},
		{"bad yaml", "runner: [\n", "fixrail.yaml: "},
		{"bad duration", strings.Replace(valid, "timeout: 10m", "timeout: soon", 1), "fixrail.yaml: "},
		{"negative duration", strings.Replace(valid, "wall_clock: 30m", "wall_clock: -1m", 1), "budget.wall_clock must be a positive duration"},
		{"no runner command", strings.Replace(valid, `command: ["./agent.sh"], `, "", 1), "runner.command is required"},
		{"unsupported runner", strings.Replace(valid, "kind: command", "kind: devin", 1), `runner.kind "devin" is not supported`},
		{"no suite", strings.Replace(valid, `suite:   {command: ["python3", "-m", "pytest", "-q"]}`, "", 1), "suite.command is required"},
		{"bad mode", strings.Replace(valid, "mode: autonomous", "mode: yolo", 1), `mode "yolo" is not valid`},
		{"zero ci_wait", valid + "forge: {ci_wait: 0s}\n", "forge.ci_wait must be a positive duration"},
		{"empty required check", valid + "forge: {required_checks: [\"\"]}\n", `forge.required_checks: "" is not a check name`},
		{"unknown forge key", valid + "forge: {ci: 1m}\n", `unknown key "ci" in forge`},
		{"tiny field cap", valid + "untrusted: {field_cap: 10}\n", "untrusted.field_cap must be between"},
		{"relative customer ids", valid + "redact: {customer_ids_file: ids.txt}\n", "must be an absolute path"},
		{"bad sandbox mode", valid + "sandbox: maybe\n", "sandbox: "},
		{"credential in extra_env", valid + "extra_env: [GITHUB_TOKEN]\n", "extra_env: "},
		{"zero diff budget", strings.Replace(valid, "max_diff_lines: 200", "max_diff_lines: 0", 1), "budget.max_diff_lines must be positive"},
		{"zero byte budget", strings.Replace(valid, "max_diff_lines: 200", "max_diff_lines: 200, max_diff_bytes: 0", 1), "budget.max_diff_bytes must be positive"},
		{"negative line cap", strings.Replace(valid, "max_diff_lines: 200", "max_diff_lines: 200, max_line_bytes: -1", 1), "budget.max_line_bytes must be positive"},
		{"unknown sandbox key", valid + "sandbox: {mode: required, ro_path: [/opt/x]}\n", `fixrail.yaml:8: unknown key "ro_path" in sandbox (known: mode, ro_paths)`},
		{"bad sandbox mode in mapping", valid + "sandbox: {mode: maybe}\n", `sandbox: sandbox mode "maybe"`},
		{"ro_paths not a list", valid + "sandbox: {ro_paths: /opt/x}\n", "fixrail.yaml:8: sandbox: "},
		{"relative ro_path", valid + "sandbox: {ro_paths: [opt/x]}\n", `sandbox.ro_paths: "opt/x" is not an absolute path`},
		{"unclean ro_path", valid + "sandbox: {ro_paths: [/opt/x/../y]}\n", `is not clean (write /opt/y)`},
		{"root ro_path", valid + "sandbox: {ro_paths: [/]}\n", "sandbox.ro_paths: / would expose the whole host"},
		{"ssh ro_path", valid + "sandbox: {ro_paths: [/srv/u/.ssh]}\n", "lies in .ssh, which holds credentials"},
		{"npmrc ro_path", valid + "sandbox: {ro_paths: [/srv/u/.npmrc]}\n", "is a credentials file"},
		{"maven settings ro_path", valid + "sandbox: {ro_paths: [/srv/u/.m2/settings.xml]}\n", "is a credentials file"},
		{"sequence sandbox", valid + "sandbox: [auto]\n", "fixrail.yaml: "},
		{"runner.network removed", strings.Replace(valid, "max_turns: 40", "max_turns: 40, network: true", 1), "runner.network was removed: no agent gets the host's network; it reaches only what runner.egress lists"},
		{"runner.network false too", strings.Replace(valid, "max_turns: 40", "max_turns: 40, network: false", 1), "runner.network was removed"},
		{"egress without port", strings.Replace(valid, "max_turns: 40", "max_turns: 40, egress: [api.anthropic.com]", 1), `runner.egress: egress entry "api.anthropic.com": want host:port`},
		{"egress wildcard", strings.Replace(valid, "max_turns: 40", `max_turns: 40, egress: ["*.example.com:443"]`, 1), "runner.egress: "},
		{"egress URL", strings.Replace(valid, "max_turns: 40", `max_turns: 40, egress: ["https://api.anthropic.com:443"]`, 1), "runner.egress: "},
		{"negative egress cap", strings.Replace(valid, "max_turns: 40", "max_turns: 40, egress_max_bytes: -1", 1), "must not be negative"},
		{"unknown scanner key", valid + "scanners: [{name: g, command: [g, \"{sarif}\"], tools: [g], fix_type: sast, rules: x}]\n", `unknown key "rules" in scanners[0]`},
		{"scanner without sarif", valid + "scanners: [{name: g, command: [g], tools: [g], fix_type: sast}]\n", "scanners[0].command must name {sarif}"},
		{"scanner without tools", valid + "scanners: [{name: g, command: [g, \"{sarif}\"], fix_type: sast}]\n", "scanners[0].tools: name the SARIF tool names"},
		{"scanner bad name", valid + "scanners: [{name: ../g, command: [g, \"{sarif}\"], tools: [g], fix_type: sast}]\n", `scanners[0].name: "../g" is not a safe name`},
		{"scanner no fix type", valid + "scanners: [{name: g, command: [g, \"{sarif}\"], tools: [g]}]\n", `scanners[0].fix_type: "" is not`},
		{"tool claimed twice", valid + "scanners: [{name: a, command: [a, \"{sarif}\"], tools: [Gosec], fix_type: sast}, {name: b, command: [b, \"{sarif}\"], tools: [gosec], fix_type: sast}]\n", `scanners[1].tools: "gosec" is already answered for by scanner "a"`},
		{"scanner negative timeout", valid + "scanners: [{name: g, command: [g, \"{sarif}\"], tools: [g], fix_type: sast, timeout: -1s}]\n", "scanners[0].timeout must be a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("fixrail.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.yaml)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestParseEgress: runner.egress absent is nil (the kind's default), an
// empty list is empty, entries are parsed canonical.
func TestParseEgress(t *testing.T) {
	for yaml, want := range map[string][]string{
		"":             nil,
		", egress: []": {},
		`, egress: ["API.Anthropic.com:443", "127.0.0.1:8080"]`: {"api.anthropic.com:443", "127.0.0.1:8080"},
	} {
		c, err := Parse("fixrail.yaml", []byte(strings.Replace(valid, "max_turns: 40", "max_turns: 40"+yaml, 1)))
		if err != nil {
			t.Fatalf("%q: %v", yaml, err)
		}
		got := c.Runner.EgressTargets()
		if (got == nil) != (want == nil) || len(got) != len(want) {
			t.Fatalf("%q: EgressTargets = %v, want %v", yaml, got, want)
		}
		for i := range got {
			if got[i].String() != want[i] {
				t.Errorf("%q: entry %d = %v, want %s", yaml, i, got[i], want[i])
			}
		}
	}
}

func TestParseSandboxForms(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name, yaml string
		mode       string
		ro         []string
		err        string
	}{
		{"scalar", "sandbox: required\n", "required", nil, ""},
		{"absent", "", "auto", nil, ""},
		{"mapping", "sandbox:\n  mode: required\n  ro_paths: [/opt/cache, /srv/vendor]\n", "required", []string{"/opt/cache", "/srv/vendor"}, ""},
		{"mapping without mode", "sandbox: {ro_paths: [/opt/cache]}\n", "auto", []string{"/opt/cache"}, ""},
		{"mapping off", "sandbox: {mode: off}\n", "off", nil, ""},
		{"HOME itself", "sandbox: {ro_paths: [" + home + "]}\n", "", nil, "is or contains the operator's home"},
		{"an ancestor of HOME", "sandbox: {ro_paths: [" + filepath.Dir(home) + "]}\n", "", nil, "is or contains the operator's home"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("fixrail.yaml", []byte(valid+tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Sandbox != tc.mode || !slices.Equal(cfg.SandboxROPaths, tc.ro) {
				t.Errorf("sandbox %q ro_paths %q, want %q %q", cfg.Sandbox, cfg.SandboxROPaths, tc.mode, tc.ro)
			}
		})
	}
}

func TestDefaultsDoNotWidenPaths(t *testing.T) {
	cfg, err := Parse("fixrail.yaml", []byte(`
runner: {command: ["a"]}
test: {command: ["t", "{test_path}"], path_glob: "tests/**"}
suite: {command: ["s"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Paths.Fixable) != 0 {
		t.Errorf("default fixable = %v; an unconfigured project must fix nothing", cfg.Paths.Fixable)
	}
	if cfg.Mode != Autonomous || cfg.Budget.WallClock != 30*time.Minute || cfg.Runner.Kind != "command" {
		t.Errorf("defaults not applied: %+v", cfg)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte("runner: {kind: command}\n"))
	f.Add([]byte("a: [\n"))
	f.Add([]byte(valid + "sandbox: {mode: required, ro_paths: [/opt/x]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("f", data)
		if err == nil && (cfg.Budget.WallClock <= 0 || len(cfg.Test.Command) == 0) {
			t.Fatalf("accepted an invalid config: %+v", cfg)
		}
		if err == nil {
			for _, p := range cfg.SandboxROPaths {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
					t.Fatalf("accepted ro_path %q", p)
				}
			}
		}
	})
}

func TestRecheckKeys(t *testing.T) {
	for _, tc := range []struct {
		yaml, err string
		retries   int
		ending    string
	}{
		{yaml: "", retries: 1, ending: RecheckEscalate},
		{yaml: "recheck: {checks: [CodeQL], max_retries: 0, on_failure: label}", retries: 0, ending: RecheckLabel},
		{yaml: "recheck: {checks: [CodeQL], max_retries: 2}", retries: 2, ending: RecheckEscalate},
		{yaml: "recheck: {max_retries: -1}", err: "recheck.max_retries"},
		{yaml: "recheck: {max_retries: 9}", err: "recheck.max_retries"},
		{yaml: "recheck: {on_failure: retry}", err: "recheck.on_failure"},
		{yaml: "recheck: {checks: [\"\"]}", err: "recheck.checks"},
		{yaml: "recheck: {wait: -1m}", err: "recheck.wait"},
		{yaml: "recheck: {bogus: 1}", err: "bogus"},
		{yaml: "forge: {push_to: someone/fork}", retries: 1, ending: RecheckEscalate},
		{yaml: "forge: {push_to: fork}", err: "forge.push_to"},
		{yaml: "forge: {push_to: a/b/c}", err: "forge.push_to"},
	} {
		c, err := Parse("fixrail.yaml", []byte(valid+tc.yaml+"\n"))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one naming %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if c.Recheck.Retries() != tc.retries || c.Recheck.OnFailure != tc.ending {
			t.Errorf("%q: retries %d ending %q, want %d %q", tc.yaml, c.Recheck.Retries(), c.Recheck.OnFailure, tc.retries, tc.ending)
		}
		if c.Recheck.WaitOr(c.Forge.CIWait) != DefaultCIWait {
			t.Errorf("%q: wait %s", tc.yaml, c.Recheck.WaitOr(c.Forge.CIWait))
		}
	}
}

// TestCheckEntries: recheck.checks and forge.required_checks take a name
// or name@app-slug, split at the last "@"; what follows it must be a
// slug or "*", so no entry is read two ways.
func TestCheckEntries(t *testing.T) {
	for _, tc := range []struct{ entry, err string }{
		{entry: "CodeQL"},
		{entry: "CodeQL@github-advanced-security"},
		{entry: "test (3.12)@github-actions"},
		{entry: `"build (node@18)@*"`},
		{entry: `"deploy@prod@my-app"`},
		{entry: "CodeQL@GitHub-Advanced-Security", err: `after its last "@" comes "GitHub-Advanced-Security", not a GitHub App slug`},
		{entry: `"build (node@18)"`, err: `after its last "@" comes "18)"`},
		{entry: `"CodeQL@"`, err: `after its last "@" comes ""`},
		{entry: `"CodeQL@-x"`, err: `not a GitHub App slug`},
		{entry: `"CodeQL@ github-actions"`, err: `not a GitHub App slug`},
		{entry: `"@github-actions"`, err: `"@github-actions" is not a check name`},
		{entry: `" @*"`, err: `" @*" is not a check name`},
	} {
		for _, key := range []string{"recheck: {checks: [%s]}", "forge: {required_checks: [%s]}"} {
			yaml := strings.Replace(key, "%s", tc.entry, 1)
			_, err := Parse("fixrail.yaml", []byte(valid+yaml+"\n"))
			want := strings.SplitN(key, ":", 2)[0]
			if want == "recheck" {
				want = "recheck.checks: "
			} else {
				want = "forge.required_checks: "
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("%s: %v", yaml, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%s: err %v, want %s…%s", yaml, err, want, tc.err)
			}
		}
	}
}
