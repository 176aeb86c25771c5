// Package slimtest holds fixrail's slim binaries (cmd/fixrail-hook,
// cmd/fixrail-resolve) to what makes them slim: a package allowlist and a
// static build from the README's install command. A slim binary exists for
// its start-up cost, paid once per call; what it links is that cost (package
// init, page faults) and its attack surface. Only tests import this package.
package slimtest

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Links is what may and may not be linked into a binary.
type Links struct {
	// Allowed are the only non-standard packages it may link; an entry
	// ending in "/" allows that prefix.
	Allowed []string
	// Forbidden must never be linked, whatever Allowed says: each entry and
	// the packages under it; standard packages may be named here too.
	Forbidden []string
	// ForbiddenExact are single packages that must never be linked while
	// those under them may be (net, but not net/url).
	ForbiddenExact []string
}

// CheckDeps lists the packages the binary in the current directory (a
// cmd/NAME test's) links, with and without cgo, and fails t for each one
// Links does not allow.
func CheckDeps(t *testing.T, name string, l Links) {
	t.Helper()
	g := goTool(t)
	for _, cgo := range []string{"0", "1"} {
		cmd := exec.Command(g, "list", "-deps", "-f", "{{if .Standard}}std {{end}}{{.ImportPath}}", ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		nonStd := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			p, std := strings.CutPrefix(line, "std ")
			for _, f := range l.Forbidden {
				if p == f || strings.HasPrefix(p, strings.TrimSuffix(f, "/")+"/") {
					t.Errorf("CGO_ENABLED=%s: %s links %s (forbidden: %s)", cgo, name, p, f)
				}
			}
			if slices.Contains(l.ForbiddenExact, p) {
				t.Errorf("CGO_ENABLED=%s: %s links %s (forbidden)", cgo, name, p)
			}
			if std {
				continue
			}
			nonStd++
			if !allowed(l.Allowed, p) {
				t.Errorf("CGO_ENABLED=%s: %s links %s, which is not in its allowlist (deps_test.go)", cgo, name, p)
			}
		}
		if nonStd < 3 {
			t.Fatalf("go list found %d non-standard packages: the test is not looking at %s", nonStd, name)
		}
	}
}

func allowed(list []string, p string) bool {
	for _, a := range list {
		if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}

// installLine finds the README's install command: the backquoted
// `go build` that builds the binaries under ./cmd/.
var installLine = regexp.MustCompile("`((?:[A-Z_]+=\\S+ )*go build [^`]*\\./cmd/[^`]*)`")

// CheckStaticInstall builds ./cmd/NAME with the flags and environment of
// the README's install command (its output directory replaced) and fails t
// unless the command names ./cmd/NAME and the binary is statically linked:
// no dynamic loader to start, no libc to map, on every call. A plain go
// build links cgo through net or os/user when a C compiler is present.
func CheckStaticInstall(t *testing.T, name string) {
	t.Helper()
	g := goTool(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, m := range installLine.FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1]+" ", " ./cmd/"+name+" ") {
			line = m[1]
			break
		}
	}
	if line == "" {
		t.Fatalf("README.md has no `go build ... ./cmd/%s` install command", name)
	}
	words := strings.Fields(line)
	// Built for linux/amd64 on any host, so the ELF check runs everywhere;
	// the README's own environment comes after and wins where it speaks.
	env := append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("install command %q does not start with go build", line)
	}
	out := t.TempDir()
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
	args = append(args, "./cmd/"+name)
	cmd := exec.Command(g, args...)
	cmd.Dir, cmd.Env = root, env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	if why := Dynamic(filepath.Join(out, name)); why != "" {
		t.Errorf("README install (%s) builds a %s that is not statically linked: %s", line, name, why)
	}
}

// Dynamic returns why the ELF file at path is dynamically linked, or "".
func Dynamic(path string) string {
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

func goTool(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go tool not on PATH: the slim-binary tests need it (CI has it)")
	}
	return g
}
