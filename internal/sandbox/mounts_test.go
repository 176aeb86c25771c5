package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// mkfiles creates each path under root: a trailing slash makes a
// directory, anything else a file with the path as its content.
func mkfiles(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The layouts ToolchainRoot recognises, relative to the root.
var (
	goRoot     = []string{"bin/go", "VERSION", "src/runtime/", "pkg/tool/"}
	nodePrefix = []string{"bin/node", "lib/node_modules/"}
	pyPrefix   = []string{"bin/python3", "lib/python3.12/"}
)

// TestToolchainRoot: a bin directory stands for its parent only when the
// parent has that toolchain's own layout; a bin directory beside anything
// else stands for itself.
func TestToolchainRoot(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string // the kind, "" for none
	}{
		{"go root", goRoot, "a Go root"},
		{"go root without VERSION", []string{"bin/go", "src/runtime/", "pkg/tool/"}, ""},
		{"go root without pkg/tool", []string{"bin/go", "VERSION", "src/runtime/"}, ""},
		{"go root whose bin/go is a directory", []string{"bin/go/", "VERSION", "src/runtime/", "pkg/tool/"}, ""},
		{"node prefix with modules", nodePrefix, "a Node.js prefix"},
		{"node prefix with headers", []string{"bin/node", "include/node/"}, "a Node.js prefix"},
		{"node without its library", []string{"bin/node", "lib/"}, ""},
		{"python prefix", pyPrefix, "a Python prefix"},
		{"virtualenv", []string{"bin/python3", "lib/python3.11/site-packages/", "pyvenv.cfg"}, "a Python prefix"},
		{"python without its library", []string{"bin/python3", "lib/python2.7/"}, ""},
		{"rust toolchain", []string{"bin/rustc", "lib/rustlib/"}, "a Rust toolchain"},
		{"jdk", []string{"bin/java", "release", "lib/modules"}, "a JDK"},
		{"jdk 8", []string{"bin/java", "release", "jre/lib/rt.jar"}, "a JDK"},
		{"java without a module image", []string{"bin/java", "release", "lib/"}, ""},
		{"a workspace with tools", []string{"bin/fixrail", "bin/tool", "repo/.fixrail/state.db"}, ""},
		// Parts of several layouts are none of them.
		{"mixed", []string{"bin/go", "bin/node", "bin/python3", "src/runtime/", "lib/"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "x")
			mkfiles(t, root, tc.files...)
			gotRoot, kind := sandbox.ToolchainRoot(filepath.Join(root, "bin"))
			if kind != tc.want || (tc.want != "") != (gotRoot == root) || (tc.want == "") != (gotRoot == "") {
				t.Errorf("ToolchainRoot(%s/bin) = %q, %q; want %q", root, gotRoot, kind, tc.want)
			}
		})
	}
	// Only a directory named bin stands for a root.
	root := t.TempDir()
	mkfiles(t, root, goRoot...)
	mkfiles(t, root, "sbin/")
	for _, p := range []string{filepath.Join(root, "sbin"), root, "relative/bin", "/bin"} {
		if r, k := sandbox.ToolchainRoot(p); r != "" || k != "" {
			t.Errorf("ToolchainRoot(%s) = %q, %q; want none", p, r, k)
		}
	}
}

// pathBinds are the sources the plan binds for PATH entries.
func pathBinds(p sandbox.MountPlan) []string {
	var out []string
	for _, b := range p.Binds() {
		if strings.Contains(b, "PATH entry") {
			src, _, _ := strings.Cut(strings.TrimPrefix(b, "read-only "), " (")
			out = append(out, src)
		}
	}
	return out
}

// TestMountPlanPathEntries: each PATH entry is mounted as itself, or as the
// toolchain root it is the bin directory of, and never as a directory that
// is, holds or (for the state and the git directory) lies in what a sandbox
// must not show: the repository, its git directory, .fixrail, the run's
// directory, fixrail's temporary directory, TMPDIR, fixrail's own binary.
// Such an entry is left out and said so; links are resolved on both sides.
func TestMountPlanPathEntries(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	x := filepath.Join(root, "x")           // a workspace: tools in x/bin, the repository under x
	repo := filepath.Join(x, "repo")        // the repository
	goroot := filepath.Join(root, "go")     // a Go root
	gox := filepath.Join(root, "gox")       // a Go root that holds the repository
	run := filepath.Join(root, "run")       // the run's directory
	tmpdir := filepath.Join(root, "tp/tmp") // fixrail's TMPDIR
	temp := filepath.Join(root, "runs")     // where disposable directories go
	self := filepath.Join(root, "fx/bin")   // fixrail's own bin directory
	mkfiles(t, root, "home/bin/", "x/bin/tool", "x/repo/.fixrail/state.db", "x/repo/.fixrail/bin/", "x/repo/.git/hooks/",
		"x/repo/.venv/bin/python3", "x/repo/.venv/lib/python3.12/", "x/repo/tools/bin/", "plain/bin/tool",
		"run/agent/wt/", "run/bin/", "tp/tmp/t/", "runs/", "fx/bin/fixrail", "fx/bin/other", "fx/lib/", "sys/", "opt/node/")
	mkfiles(t, goroot, goRoot...)
	mkfiles(t, gox, goRoot...)
	mkfiles(t, gox, "src/repo/.fixrail/", "src/repo/.git/")
	mkfiles(t, filepath.Join(root, "opt/node"), nodePrefix...)
	// Links: one PATH entry leads into the repository, one to the
	// workspace, and the repository is named through a link too.
	for link, target := range map[string]string{"alias": repo, "ws": x, "repolink": repo, "gitlink": filepath.Join(repo, ".git")} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmpdir)
	sandbox.SetExecutable(t, filepath.Join(self, "fixrail"))
	hide := sandbox.Hidden{Repo: repo, GitDir: filepath.Join(repo, ".git"), State: filepath.Join(repo, ".fixrail"), RunDir: run, Temp: temp}

	tests := []struct {
		name    string
		entries []string
		hide    sandbox.Hidden
		mounted []string // the PATH binds, in order
		skipped []string // words each skipped line holds, one line per entry
	}{
		{"an entry as itself", []string{filepath.Join(root, "plain/bin")}, hide, []string{filepath.Join(root, "plain/bin")}, nil},
		{"a go root's bin is the go root", []string{filepath.Join(goroot, "bin")}, hide, []string{goroot}, nil},
		{"a node prefix's bin is the prefix", []string{filepath.Join(root, "opt/node/bin")}, hide, []string{filepath.Join(root, "opt/node")}, nil},
		{"x/bin with the repository under x is x/bin only", []string{filepath.Join(x, "bin")}, hide, []string{filepath.Join(x, "bin")}, nil},
		{"x/bin is x/bin only even without Hide", []string{filepath.Join(x, "bin")}, sandbox.Hidden{}, []string{filepath.Join(x, "bin")}, nil},
		{"a go root holding the repository falls back to its bin", []string{filepath.Join(gox, "bin")},
			sandbox.Hidden{Repo: filepath.Join(gox, "src/repo")}, []string{filepath.Join(gox, "bin")}, nil},
		{"the workspace itself", []string{x}, hide, nil, []string{"PATH entry " + x + " holds the repository " + repo}},
		{"the repository itself", []string{repo}, hide, nil, []string{"is the repository"}},
		{"an entry in .fixrail", []string{filepath.Join(repo, ".fixrail/bin")}, hide, nil, []string{"lies in fixrail's state directory"}},
		{"an entry in the git directory", []string{filepath.Join(repo, ".git/hooks")}, hide, nil, []string{"lies in the repository's git directory"}},
		{"an in-tree virtualenv is its prefix", []string{filepath.Join(repo, ".venv/bin")}, hide, []string{filepath.Join(repo, ".venv")}, nil},
		{"an entry in the repository's tree", []string{filepath.Join(repo, "tools/bin")}, hide, []string{filepath.Join(repo, "tools/bin")}, nil},
		{"the run's directory", []string{run}, hide, nil, []string{"is the run's directory"}},
		{"an entry in the run's directory", []string{filepath.Join(run, "bin")}, hide, nil, []string{"lies in the run's directory"}},
		{"TMPDIR", []string{tmpdir}, hide, nil, []string{"is fixrail's TMPDIR"}},
		{"an entry holding TMPDIR", []string{filepath.Join(root, "tp")}, hide, nil, []string{"holds fixrail's TMPDIR"}},
		{"an entry in TMPDIR", []string{filepath.Join(tmpdir, "t")}, hide, []string{filepath.Join(tmpdir, "t")}, nil},
		{"where runs go", []string{temp}, hide, nil, []string{"is fixrail's temporary directory"}},
		{"fixrail's own bin directory", []string{self}, hide, nil, []string{"holds fixrail's own binary " + filepath.Join(self, "fixrail")}},
		{"fixrail's own bin directory without Hide", []string{self}, sandbox.Hidden{}, nil, []string{"holds fixrail's own binary " + filepath.Join(self, "fixrail")}},
		// The link and its target are each left out.
		{"a link into the repository", []string{filepath.Join(root, "alias")}, hide, nil, []string{"alias is the repository", "alias (a link to " + repo + ") is the repository"}},
		{"a link to the workspace's bin", []string{filepath.Join(root, "ws/bin")}, hide,
			[]string{filepath.Join(root, "ws/bin"), filepath.Join(x, "bin")}, nil},
		{"the workspace through a link", []string{filepath.Join(root, "ws")}, hide, nil, []string{"ws holds the repository", "ws (a link to " + x + ") holds the repository"}},
		{"the repository named through a link", []string{x}, sandbox.Hidden{Repo: filepath.Join(root, "repolink")}, nil, []string{"holds the repository"}},
		{"an entry in the git directory named through a link", []string{filepath.Join(repo, ".git/hooks")},
			sandbox.Hidden{GitDir: filepath.Join(root, "gitlink")}, nil, []string{"lies in the repository's git directory"}},
		{"in the operator's home", []string{filepath.Join(home, "bin")}, hide, nil, []string{"operator's home"}},
		{"a system root's entry adds nothing", []string{"/usr/local/bin", "/usr/bin", "/bin"}, hide, nil, nil},
		{"the filesystem root", []string{"/"}, hide, nil, []string{"PATH entry / is the filesystem root"}},
		{"relative and missing entries", []string{"bin", filepath.Join(root, "nope")}, hide, nil, nil},
		{"a wider root swallows a narrower one", []string{filepath.Join(goroot, "bin/sub"), filepath.Join(goroot, "bin")}, hide, []string{goroot}, nil},
	}
	mkfiles(t, goroot, "bin/sub/")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &sandbox.Spec{Hide: tc.hide}
			p, err := spec.Mounts([]string{"PATH=" + strings.Join(tc.entries, ":")})
			if err != nil {
				t.Fatal(err)
			}
			if got := pathBinds(p); !slices.Equal(got, tc.mounted) {
				t.Errorf("PATH binds = %q, want %q", got, tc.mounted)
			}
			got := p.Skipped()
			if len(got) != len(tc.skipped) {
				t.Fatalf("skipped = %q, want %d lines holding %q", got, len(tc.skipped), tc.skipped)
			}
			for _, line := range got {
				routine := strings.Contains(line, "operator's home") || strings.Contains(line, "the filesystem root")
				if routine == slices.Contains(p.Withheld(), line) {
					t.Errorf("Withheld() = %q: want exactly the entries that would show a hidden place, of %q", p.Withheld(), got)
				}
			}
			for i, want := range tc.skipped {
				if !strings.Contains(got[i], want) || !strings.HasPrefix(got[i], "PATH entry ") {
					t.Errorf("skipped[%d] = %q, want it to name the entry and say %q", i, got[i], want)
				}
			}
			// What matters: nothing of the state is shown, whatever the PATH.
			for _, secret := range []string{filepath.Join(repo, ".fixrail/state.db"), filepath.Join(repo, ".git/hooks"), filepath.Join(self, "fixrail"), filepath.Join(run, "agent")} {
				if by := p.Shows(secret); by != "" && tc.hide != (sandbox.Hidden{}) {
					t.Errorf("the plan shows %s through %s", secret, by)
				}
			}
		})
	}
}

// TestMountPlanRefusesFixedMounts: an RO, RW or Tmp path, or a system root,
// that would show what Hide names (or fixrail's TMPDIR or binary) is
// refused with ErrExposes naming it — they cannot be narrowed, and the
// caller asked for them. The exact binary as an RO path (the phase hook)
// and the run's own directories inside the run's directory are allowed.
func TestMountPlanRefusesFixedMounts(t *testing.T) {
	root := t.TempDir()
	x := filepath.Join(root, "x")
	repo := filepath.Join(x, "repo")
	run := filepath.Join(root, "r/run")
	self := filepath.Join(root, "fx/bin/fixrail")
	mkfiles(t, root, "x/repo/.fixrail/runs/", "x/repo/.git/", "r/run/agent/wt/", "r/run/t/", "fx/bin/fixrail", "cache/", "home/")
	t.Setenv("HOME", filepath.Join(root, "home"))
	sandbox.SetExecutable(t, self)
	hide := sandbox.Hidden{Repo: repo, GitDir: filepath.Join(repo, ".git"), State: filepath.Join(repo, ".fixrail"), RunDir: run}
	tests := []struct {
		name string
		spec sandbox.Spec
		want string // in the error; "" for none
	}{
		{"ro holding the repository", sandbox.Spec{RO: []string{x}}, "read-only path " + x + " holds the repository " + repo},
		{"ro the repository", sandbox.Spec{RO: []string{repo}}, "is the repository " + repo},
		{"ro in .fixrail", sandbox.Spec{RO: []string{filepath.Join(repo, ".fixrail/runs")}}, "lies in fixrail's state directory"},
		{"rw .fixrail", sandbox.Spec{RW: []string{filepath.Join(repo, ".fixrail")}}, "fixrail's state directory"},
		{"rw the git directory", sandbox.Spec{RW: []string{filepath.Join(repo, ".git")}}, "the repository's git directory"},
		{"ro holding the run's directory", sandbox.Spec{RO: []string{filepath.Join(root, "r")}}, "the run's directory"},
		{"tmp holding the run's directory", sandbox.Spec{Tmp: filepath.Join(root, "r")}, "the run's directory"},
		{"ro holding fixrail's binary", sandbox.Spec{RO: []string{filepath.Dir(self)}}, "fixrail's own binary"},
		{"rw fixrail's binary", sandbox.Spec{RW: []string{self}}, "fixrail's own binary"},
		{"a system root holding the repository", sandbox.Spec{Hide: sandbox.Hidden{Repo: "/usr/src/fixrail-repo"}}, "the system root /usr holds the repository /usr/src/fixrail-repo"},
		{"a system root holding the state", sandbox.Spec{Hide: sandbox.Hidden{State: "/etc/fixrail/.fixrail"}}, "the system root /etc holds fixrail's state directory"},
		{"the worktree and its TMPDIR in the run's directory", sandbox.Spec{RW: []string{filepath.Join(run, "agent")}, Tmp: filepath.Join(run, "t")}, ""},
		{"ro exactly fixrail's binary (the phase hook)", sandbox.Spec{RO: []string{self}}, ""},
		{"ro a cache beside the repository", sandbox.Spec{RO: []string{filepath.Join(root, "cache")}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Hide == (sandbox.Hidden{}) {
				spec.Hide = hide
			}
			_, err := spec.Mounts([]string{"PATH=/usr/bin:/bin"})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Mounts: %v; want it allowed", err)
			case tc.want != "" && (!errors.Is(err, sandbox.ErrExposes) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Mounts: %v; want ErrExposes saying %q", err, tc.want)
			}
			// Run refuses it the same way, whatever the mode, before bwrap.
			if tc.want != "" {
				for _, mode := range []sandbox.Mode{sandbox.Auto, sandbox.Required} {
					spec.Mode = mode
					_, err := sandbox.Run(t.Context(), sandbox.Cmd{Args: []string{"/bin/true"}, Dir: "/", Sandbox: &spec})
					if !errors.Is(err, sandbox.ErrExposes) {
						t.Errorf("Run (%s) = %v; want ErrExposes", mode, err)
					}
				}
			}
		})
	}
}

// TestSandboxHidesFixrailState is the layout of issue 24 under bubblewrap:
// tools in x/bin, the repository under x with its .fixrail (the ledger, the
// runs), and fixrail's binary in x/bin or beside it. A sandboxed command
// reads none of the state nor fixrail's binary; a tool in x/bin still runs
// when fixrail is not there; unsandboxed, the same script reads them all
// (the control). Restoring the old rule (every X/bin mounts X) makes it red.
func TestSandboxHidesFixrailState(t *testing.T) {
	requireBwrap(t)
	root := t.TempDir()
	x := filepath.Join(root, "x")
	repo := filepath.Join(x, "repo")
	run := filepath.Join(root, "run")
	wt := filepath.Join(run, "agent", "wt")
	mkfiles(t, root, "run/agent/wt/", "home/")
	t.Setenv("HOME", filepath.Join(root, "home"))
	canaries := map[string]string{}
	plant := func(p string) {
		c := fmt.Sprintf("CANARY-%s-%d", filepath.Base(p), time.Now().UnixNano())
		mkfiles(t, root, strings.TrimPrefix(p, root+"/"))
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
		canaries[p] = c
	}
	// The state every case must hide; fixrail's binary is added per case.
	plant(filepath.Join(repo, ".fixrail", "state.db"))
	plant(filepath.Join(repo, ".fixrail", "runs", "run-1.json"))
	plant(filepath.Join(repo, ".fixrail", "outbox", "bundle.json"))
	plant(filepath.Join(repo, ".git", "config"))
	plant(filepath.Join(x, "bin", "fixrail"))
	plant(filepath.Join(x, "libexec", "fixrail"))
	if err := os.WriteFile(filepath.Join(x, "bin", "tool"), []byte("#!/bin/sh\necho tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `for f in "$@"; do cat "$f" 2>/dev/null && echo; done
		ls -R "` + x + `" 2>/dev/null
		tool 2>/dev/null
		exit 0`
	var paths []string
	for p := range canaries {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	hide := sandbox.Hidden{Repo: repo, GitDir: filepath.Join(repo, ".git"), State: filepath.Join(repo, ".fixrail"), RunDir: run}
	tests := []struct {
		name     string
		self     string // fixrail's binary
		goroot   bool   // x has a Go root's layout too
		sandbox  bool
		wantTool bool
	}{
		{"fixrail in x/bin", filepath.Join(x, "bin", "fixrail"), false, true, false},
		{"fixrail beside x/bin", filepath.Join(x, "libexec", "fixrail"), false, true, true},
		{"x is a go root too", filepath.Join(x, "libexec", "fixrail"), true, true, true},
		{"unsandboxed control", filepath.Join(x, "bin", "fixrail"), false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sandbox.SetExecutable(t, tc.self)
			if tc.goroot {
				mkfiles(t, x, goRoot...)
				t.Cleanup(func() {
					for _, p := range []string{"bin/go", "VERSION", "src", "pkg"} {
						os.RemoveAll(filepath.Join(x, p))
					}
				})
			}
			env := []string{"PATH=" + filepath.Join(x, "bin") + ":/usr/bin:/bin", "HOME=" + filepath.Join(root, "home")}
			c := sandbox.Cmd{Args: sh(script, paths...), Dir: wt, Env: env}
			if tc.sandbox {
				c.Sandbox = &sandbox.Spec{Mode: sandbox.Required, RW: []string{filepath.Join(run, "agent")}, Hide: hide}
			}
			res, err := sandbox.Run(t.Context(), c)
			if err != nil || !res.Success() || res.Sandboxed != tc.sandbox {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			// Secret: the state and fixrail's binary (the other "fixrail"
			// is just a file in x/bin, there to be read).
			var read, secret []string
			for p, c := range canaries {
				if strings.Contains(p, ".fixrail") || strings.Contains(p, ".git") || p == tc.self {
					secret = append(secret, p)
					if strings.Contains(res.Stdout, c) {
						read = append(read, p)
					}
				}
			}
			switch {
			case tc.sandbox && len(read) > 0:
				t.Errorf("the sandboxed command read %q:\n%s", read, res.Stdout)
			case !tc.sandbox && len(read) != len(secret):
				t.Errorf("control: the unsandboxed command read %q, want all of %q; the test cannot see a leak:\n%s", read, secret, res.Stdout)
			}
			if strings.Contains(res.Stdout, "state.db") && tc.sandbox {
				t.Errorf("the sandboxed command listed the state directory:\n%s", res.Stdout)
			}
			if got := strings.Contains(res.Stdout, "tool-ran"); got != tc.wantTool {
				t.Errorf("tool in x/bin ran = %v, want %v:\n%s", got, tc.wantTool, res.Stdout)
			}
		})
	}
}
