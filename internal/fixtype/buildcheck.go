package fixtype

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/markdown"
	"github.com/fixrail/fixrail/internal/verdict"
)

// BuildCheck is one language build check: the command, the directory it
// is rooted at, and the toolchain it needs.
type BuildCheck struct {
	Lang string   `json:"lang"`
	Root string   `json:"root"`
	Tool string   `json:"tool"`
	Argv []string `json:"argv"`
}

// BuildChecks finds, in the checkout dir, the build check of each file:
// walking up from the file to the nearest go.mod (go build ./...) or
// package.json (npm run build --if-present), so a monorepo's module is
// the one built; py_compile for a Python file; terraform validate in a
// .tf file's directory. Other files have none. Each root is checked once.
func BuildChecks(dir string, files []string) []BuildCheck {
	var out []BuildCheck
	add := func(b BuildCheck) {
		if !slices.ContainsFunc(out, func(o BuildCheck) bool { return o.Lang == b.Lang && o.Root == b.Root && slices.Equal(o.Argv, b.Argv) }) {
			out = append(out, b)
		}
	}
	for _, f := range files {
		switch ext := path.Ext(f); {
		case ext == ".go" || path.Base(f) == "go.mod":
			if root, ok := nearest(dir, f, "go.mod"); ok {
				add(BuildCheck{Lang: "go", Root: root, Tool: "go", Argv: []string{"go", "-C", root, "build", "./..."}})
			}
		case slices.Contains([]string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}, ext) || path.Base(f) == "package.json":
			if root, ok := nearest(dir, f, "package.json"); ok {
				add(BuildCheck{Lang: "javascript", Root: root, Tool: "npm", Argv: []string{"npm", "--prefix", root, "run", "build", "--if-present"}})
			}
		case ext == ".py":
			add(BuildCheck{Lang: "python", Root: path.Dir(f), Tool: "python3", Argv: []string{"python3", "-m", "py_compile", f}})
		case ext == ".tf":
			d := path.Dir(f)
			add(BuildCheck{Lang: "terraform", Root: d, Tool: "terraform", Argv: []string{"terraform", "-chdir=" + d, "validate", "-no-color"}})
		}
	}
	return out
}

// nearest walks up from f's directory to the repository root for a
// regular file called name (never a link: the tree chose it).
func nearest(dir, f, name string) (string, bool) {
	d := path.Dir(f)
	for {
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d), name)); err == nil && fi.Mode().IsRegular() {
			return d, true
		}
		if d == "." {
			return "", false
		}
		d = path.Dir(d)
	}
}

// lookPath is exec.LookPath; a test replaces it to take a toolchain away.
var lookPath = exec.LookPath

// terraformOffline is what terraform validate says when the providers a
// configuration needs were never installed (terraform init needs the
// network): the check could not run, which is not a verdict on the fix.
var terraformOffline = []string{"terraform init", "Missing required provider", "missing or corrupted provider plugins", "Module not installed"}

// buildCheckGate runs each build check on a fresh checkout of the
// candidate, in the sandbox. A missing toolchain, or a terraform
// configuration whose providers cannot be installed offline, passes
// unconfirmed with the label, never silently.
func buildCheckGate(e *Env, checks func() []BuildCheck) *gates.Gate {
	return &gates.Gate{
		Name:   "build-check",
		Doc:    "the language build check of each changed file passes on the candidate (go build, npm run build, py_compile, terraform validate)",
		Reason: verdict.ReasonBuildCheck,
		Run: func(ctx context.Context, c *gates.Change) (gates.Verdict, error) {
			var ok, skipped []string
			var outputs []string
			for _, b := range checks() {
				cmd := strings.Join(b.Argv, " ")
				if _, err := lookPath(b.Tool); err != nil {
					skipped = append(skipped, fmt.Sprintf("%s not run: %s is not installed", markdown.Code(cmd), b.Tool))
					continue
				}
				res, err := e.Exec(ctx, "build-"+b.Lang, c.Commit, b.Argv, e.Config.Suite.Timeout)
				if err != nil {
					return gates.Verdict{}, fmt.Errorf("build check %s: %w", cmd, err)
				}
				outputs = append(outputs, "$ "+cmd+"\n"+gates.Tail(res))
				if !res.Success() {
					if b.Lang == "terraform" && slices.ContainsFunc(terraformOffline, func(s string) bool { return strings.Contains(res.Output(), s) }) {
						skipped = append(skipped, fmt.Sprintf("%s could not run: the configuration's providers or modules are not installed and fixrail does not fetch them", markdown.Code(cmd)))
						continue
					}
					return gates.Verdict{Detail: fmt.Sprintf("%s fails on the candidate (%s)", markdown.Code(cmd), res.Describe()), Output: strings.Join(outputs, "\n")}, nil
				}
				ok = append(ok, markdown.Code(cmd)+" passes")
			}
			out := strings.Join(outputs, "\n")
			switch {
			case len(skipped) > 0:
				return gates.Verdict{Pass: true, Unconfirmed: true, Label: gates.LabelNeedsReview,
					Detail: "build check skipped: " + strings.Join(append(skipped, ok...), "; "), Output: out}, nil
			case len(ok) == 0:
				return gates.Verdict{Pass: true, Detail: "no build check applies to the changed files (not Go, JavaScript, Python or Terraform)"}, nil
			}
			return gates.Verdict{Pass: true, Detail: strings.Join(ok, "; "), Output: out}, nil
		},
	}
}
