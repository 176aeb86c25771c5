package pipeline_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// lineScanner is a stand-in scanner for the body goldens (the real gosec
// runs in the CLI scenarios): it reports rule R1, high, at every line of
// the files it is given that contains "UNSAFE".
const lineScanner = `import json, sys
out, paths = sys.argv[1], sys.argv[2:]
res = []
for p in paths:
    for i, l in enumerate(open(p).read().split("\n")):
        if "UNSAFE" in l:
            res.append({"ruleId": "R1", "level": "error", "message": {"text": "unsafe"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": p}, "region": {"startLine": i + 1}}}]})
json.dump({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "linescan"}}, "results": res}]}, open(out, "w"))
`

// TestScannedBodyGolden pins the PR bodies of the sast and secret types:
// a sast finding judged by a configured scanner, and a secret whose body
// opens with "rotate first" and never carries the value.
func TestScannedBodyGolden(t *testing.T) {
	scan := filepath.Join(t.TempDir(), "scan.py")
	if err := os.WriteFile(scan, []byte(lineScanner), 0o644); err != nil {
		t.Fatal(err)
	}
	key := "zk_" + "test_" + strings.Repeat("Qm3v", 6)
	sum := sha256.Sum256([]byte(key))
	yaml := reasonsYAML + "scanners:\n  - {name: linescan, command: [\"python3\", \"" + scan + "\", \"{sarif}\", \"{paths}\"], tools: [\"linescan\"], fix_type: sast}\n"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		finding *findings.Finding
		edit    func(wt string) string
	}{
		{"draft-pr-sast", map[string]string{"fixrail.yaml": yaml, "src/app.txt": "ok\nUNSAFE query\n", "tests/.keep": ""},
			&findings.Finding{ID: "golden", Title: "linescan R1", FixType: "sast", Evidence: &findings.Evidence{Path: "src/app.txt", Line: 2, Rule: "R1", Tool: "linescan", Severity: "high"}},
			func(wt string) string {
				os.WriteFile(filepath.Join(wt, "src", "app.txt"), []byte("ok\nsafe query\n"), 0o644)
				return "src/app.txt"
			}},
		{"draft-pr-secret", map[string]string{"fixrail.yaml": reasonsYAML, "src/app.cfg": "name = shop\nkey = " + key + "\n", "tests/.keep": ""},
			&findings.Finding{ID: "golden", Title: "committed key", FixType: "secret", Evidence: &findings.Evidence{Path: "src/app.cfg", Line: 2, Rule: "generic-api-key", Tool: "gitleaks", SecretSHA256: hex.EncodeToString(sum[:])}},
			func(wt string) string {
				os.WriteFile(filepath.Join(wt, "src", "app.cfg"), []byte("name = shop\nkey = ${APP_KEY}\n"), 0o644)
				return "src/app.cfg"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.NewRepo(t, tc.files)
			s, outbox := prepared(t, dir)
			var prompt string
			rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
				Finding: tc.finding,
				Runner: funcAgent(func(inv runner.Invocation) (runner.Result, error) {
					prompt = inv.Prompt
					p := tc.edit(inv.Worktree)
					os.WriteFile(inv.ResultPath, []byte(`{"summary": "fixed", "files_changed": ["`+p+`"]}`), 0o600)
					return runner.Result{}, nil
				}),
				Forge:   &forge.Local{Dir: outbox},
				TempDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Terminal != pipeline.DraftPR {
				t.Fatalf("%s %s: %s", rep.Terminal, rep.Reason, rep.Detail)
			}
			body, err := os.ReadFile(filepath.Join(rep.PR, "body.md"))
			if err != nil {
				t.Fatal(err)
			}
			patch, err := os.ReadFile(filepath.Join(rep.PR, "fix.patch"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.finding.FixType == "secret" {
				// The prompt shows the value; nothing published does.
				if !strings.Contains(prompt, key) {
					t.Error("the fix prompt does not show the value the agent must remove")
				}
				for what, text := range map[string]string{"body": string(body), "patch": string(patch)} {
					if strings.Contains(text, key) {
						t.Errorf("the published %s carries the value", what)
					}
				}
				if !strings.Contains(string(patch), "-key = [REDACTED by fixrail: the alerted credential]") {
					t.Errorf("the published patch's deleted line is not redacted:\n%s", patch)
				}
			}
			matchGolden(t, filepath.Join("testdata", "body", tc.name+".md"), normalise(strings.ReplaceAll(string(body), scan, "SCANNER.py")))
		})
	}
}
