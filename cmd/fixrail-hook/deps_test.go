package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The hook runs once per tool call, so what it links is start-up cost paid
// on every call (package init, page faults) and attack surface on the
// agent's every step. These are the only non-standard packages it may link.
var allowedDeps = []string{
	"github.com/fixrail/fixrail/cmd/fixrail-hook",
	"github.com/fixrail/fixrail/internal/cli/hookcmd",
	"github.com/fixrail/fixrail/internal/hook",
	"github.com/fixrail/fixrail/internal/policy",
	"github.com/fixrail/fixrail/internal/approval",
	"github.com/fixrail/fixrail/internal/receipt",
	"github.com/fixrail/fixrail/internal/redact",
	"github.com/fixrail/fixrail/internal/pathguard",
	"mvdan.cc/sh/v3/",                  // the shell parser and expander
	"github.com/bmatcuk/doublestar/v4", // policy's path globs
}

// forbiddenDeps must never reach the hook, whatever the allowlist says: the
// forge client, the model SDKs, database drivers, the workflow linter.
var forbiddenDeps = []string{
	"github.com/google/go-github", "github.com/anthropics/", "github.com/openai/", "google.golang.org/genai",
	"modernc.org/sqlite", "github.com/mattn/go-sqlite3", "github.com/jackc/pgx", "github.com/lib/pq",
	"github.com/rhysd/actionlint", "github.com/fixrail/fixrail/internal/pipeline", "github.com/fixrail/fixrail/internal/forge",
	"github.com/fixrail/fixrail/internal/runner", "net/http",
}

func goTool(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go tool not on PATH: the dependency test needs it (CI has it)")
	}
	return g
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}

func TestDependencyAllowlist(t *testing.T) {
	g := goTool(t)
	for _, cgo := range []string{"0", "1"} {
		cmd := exec.Command(g, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		var got []string
		for _, p := range strings.Fields(string(out)) {
			got = append(got, p)
			for _, f := range forbiddenDeps {
				if strings.HasPrefix(p, f) {
					t.Errorf("CGO_ENABLED=%s: fixrail-hook links %s (forbidden: %s)", cgo, p, f)
				}
			}
			if !allowed(p) {
				t.Errorf("CGO_ENABLED=%s: fixrail-hook links %s, which is not in the allowlist (deps_test.go)", cgo, p)
			}
		}
		if len(got) < 3 {
			t.Fatalf("go list found only %v: the test is not looking at the hook", got)
		}
		// net/http is standard, so check the standard packages too.
		cmd = exec.Command(g, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		out, err = cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if p == "net/http" || p == "net" || p == "plugin" {
				t.Errorf("CGO_ENABLED=%s: fixrail-hook links %s", cgo, p)
			}
		}
	}
}

func allowed(p string) bool {
	for _, a := range allowedDeps {
		if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}

// installLine finds the README's install command: the backquoted `go build`
// that builds ./cmd/fixrail-hook.
var installLine = regexp.MustCompile("`((?:[A-Z_]+=\\S+ )*go build [^`]*\\./cmd/fixrail-hook[^`]*)`")

// The README's install command must build a statically linked hook: no
// dynamic loader to start, no libc to map, on every tool call. A plain go
// build links cgo through os/user (mvdan.cc/sh/v3/expand imports it for
// ~user) when a C compiler is present.
func TestREADMEInstallBuildsStaticHook(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF check: linux only")
	}
	if testing.Short() {
		t.Skip("builds the hook")
	}
	g := goTool(t)
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := installLine.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no `go build ... ./cmd/fixrail-hook` install command")
	}
	words := strings.Fields(string(m[1]))
	env := os.Environ()
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("install command %q does not start with go build", m[1])
	}
	out := t.TempDir()
	// The README's flags and environment, with its output directory
	// replaced and only the hook built.
	args := []string{"build"}
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-o":
			i++
			args = append(args, "-o", out+"/")
		case strings.HasPrefix(w, "./cmd/"):
		default:
			args = append(args, w)
		}
	}
	args = append(args, "./cmd/fixrail-hook")
	cmd := exec.Command(g, args...)
	cmd.Dir, cmd.Env = root, env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	bin := filepath.Join(out, "fixrail-hook")
	if err := static(bin); err != "" {
		t.Errorf("README install (%s) builds a hook that is not statically linked: %s", m[1], err)
	}
}

// static returns why the ELF file at path is dynamically linked, or "".
func static(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var why []string
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			b := make([]byte, p.Filesz)
			_, _ = p.ReadAt(b, 0)
			why = append(why, "interpreter "+string(bytes.TrimRight(b, "\x00")))
		case elf.PT_DYNAMIC:
			why = append(why, "a dynamic section")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		why = append(why, "libraries "+strings.Join(libs, " "))
	}
	return strings.Join(why, "; ")
}
