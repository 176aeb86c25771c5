package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// errAny stands for an error the table wants without naming it (EvalSymlinks
// reports a loop as a plain string, not as ELOOP).
var errAny = errors.New("any error")

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		root, p string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/b/c/d", true},
		{"/a/b/", "/a/b/c", true},    // a trailing slash on the root is cleaned
		{"/a/b", "/a/b/", true},      // and on the path
		{"/", "/", true},             // the root of the file system holds itself
		{"/", "/etc/passwd", true},   // and everything absolute
		{"/a/b", "/a/bc", false},     // a shared prefix is not a parent
		{"/a/b", "/a", false},        // a parent is not within its child
		{"/a/b", "/a/b/../c", false}, // ".." is cleaned before comparing
		{"/a/b", "/a/b/c/../../b/d", true},
		{"/a/b", "/a/b/..", false},
		{"/a/b", "/x/a/b", false},
		{"a/b", "a/b/c", false}, // relative: the base is unknown
		{"/a/b", "c", false},
		{"/a/b", "", false},
		{"", "/a/b", false}, // an empty root is not "everything"
	} {
		if got := Within(tc.root, tc.p); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.root, tc.p, got, tc.want)
		}
	}
}

// TestResolveExisting builds a tree with symbolic links that lead out of it,
// and checks both what ResolveExisting returns and that Within on its result
// catches the escape a lexical check alone would miss.
func TestResolveExisting(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "dir"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"up":       out,                       // absolute link out
		"rel-up":   "../outside",              // relative link out
		"in":       "dir",                     // link that stays inside
		"dangling": filepath.Join(out, "new"), // link out to something not there yet
		"loop":     "loop",                    // a link to itself
		"chain":    "in/../../outside",        // through an inside link, then out
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name, p string
		want    string // "" with errIs set: an error is wanted
		errIs   error
		inside  bool
	}{
		{name: "plain dir", p: "dir", want: "root/dir", inside: true},
		{name: "missing tail", p: "dir/a/b", want: "root/dir/a/b", inside: true},
		{name: "root itself", p: ".", want: "root", inside: true},
		{name: "inside link", p: "in/x", want: "root/dir/x", inside: true},
		{name: "absolute link out", p: "up", want: "outside"},
		{name: "missing file below a link out", p: "up/new/file", want: "outside/new/file"},
		{name: "relative link out", p: "rel-up/x", want: "outside/x"},
		{name: "dangling link out", p: "dangling", errIs: ErrDanglingLink},
		{name: "below a dangling link", p: "dangling/x", errIs: ErrDanglingLink},
		{name: "chain out", p: "chain", want: "outside"},
		{name: "dot-dot in the missing tail", p: "dir/missing/../../../outside", want: "outside"},
		{name: "symlink loop", p: "loop/x", errIs: errAny},
		{name: "file used as a directory", p: "file/x", errIs: syscall.ENOTDIR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveExisting(filepath.Join(root, tc.p))
			if tc.errIs != nil {
				if err == nil || tc.errIs != errAny && !errors.Is(err, tc.errIs) {
					t.Fatalf("ResolveExisting = %q, %v; want an error wrapping %v", got, err, tc.errIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, tc.want); got != want {
				t.Errorf("ResolveExisting = %q, want %q", got, want)
			}
			if in := Within(root, got); in != tc.inside {
				t.Errorf("Within(root, %q) = %v, want %v", got, in, tc.inside)
			}
		})
	}
}

// TestResolveWithinSymlinkEscapes drives the same escapes through
// ResolveWithin, which must refuse every one with ErrEscape.
func TestResolveWithinSymlinkEscapes(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "dir"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"up": out, "rel-up": "../outside", "dangling": filepath.Join(out, "new"), "in": "dir"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"up", "up/x", "rel-up/a/b", "dangling", "dangling/deeper"} {
		if got, err := ResolveWithin(root, rel); !errors.Is(err, ErrEscape) {
			t.Errorf("ResolveWithin(root, %q) = %q, %v; want ErrEscape", rel, got, err)
		}
	}
	if got, err := ResolveWithin(root, "in/new"); err != nil || got != filepath.Join(root, "dir", "new") {
		t.Errorf("ResolveWithin(root, in/new) = %q, %v; want %s", got, err, filepath.Join(root, "dir", "new"))
	}
}
