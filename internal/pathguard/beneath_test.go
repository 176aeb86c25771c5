package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteBeneath: a write into the root lands beneath it, through real
// directories only; a symbolic link anywhere on the way — pointing outside
// the root or inside it — is refused and nothing is written where it
// points.
func TestWriteBeneath(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, root, outside string)
		rel     string
		replace bool
		wantErr error // nil: written
	}{
		{name: "fresh directories", rel: ".github/workflows/fixrail.yml"},
		{name: "top level", rel: "fixrail.yaml"},
		{name: "existing directories", rel: "a/b/c.txt", setup: func(t *testing.T, root, _ string) { mkdir(t, filepath.Join(root, "a", "b")) }},
		{name: "replace an existing file", rel: "a/f", replace: true, setup: func(t *testing.T, root, _ string) {
			mkdir(t, filepath.Join(root, "a"))
			write(t, filepath.Join(root, "a", "f"), "old")
		}},
		{name: "last directory links outside", rel: ".github/workflows/fixrail.yml", wantErr: ErrNotPlainDir, setup: func(t *testing.T, root, outside string) {
			mkdir(t, filepath.Join(root, ".github"))
			link(t, "../../../outside", filepath.Join(root, ".github", "workflows"))
		}},
		{name: "first directory links outside", rel: ".github/workflows/fixrail.yml", wantErr: ErrNotPlainDir, setup: func(t *testing.T, root, outside string) {
			link(t, outside, filepath.Join(root, ".github"))
			mkdir(t, filepath.Join(outside, "workflows"))
		}},
		{name: "directory links inside the root", rel: "state/runs/r.json", wantErr: ErrNotPlainDir, setup: func(t *testing.T, root, _ string) {
			mkdir(t, filepath.Join(root, "state", "elsewhere"))
			link(t, "elsewhere", filepath.Join(root, "state", "runs"))
		}},
		{name: "a file where a directory goes", rel: "state/runs/r.json", wantErr: ErrNotPlainDir, setup: func(t *testing.T, root, _ string) {
			mkdir(t, filepath.Join(root, "state"))
			write(t, filepath.Join(root, "state", "runs"), "x")
		}},
		{name: "dangling link on the way", rel: "a/b", wantErr: ErrNotPlainDir, setup: func(t *testing.T, root, outside string) {
			link(t, filepath.Join(outside, "missing"), filepath.Join(root, "a"))
		}},
		{name: "link at the file, new only", rel: "f", wantErr: os.ErrExist, setup: func(t *testing.T, root, outside string) {
			link(t, filepath.Join(outside, "target"), filepath.Join(root, "f"))
		}},
		{name: "link at the file, replaced", rel: "f", replace: true, setup: func(t *testing.T, root, outside string) {
			link(t, filepath.Join(outside, "target"), filepath.Join(root, "f"))
		}},
		{name: "escape", rel: "../outside/x", wantErr: ErrEscape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			root, outside := filepath.Join(top, "clone", "repo"), filepath.Join(top, "outside")
			mkdir(t, root)
			mkdir(t, outside)
			if tc.setup != nil {
				tc.setup(t, root, outside)
			}
			err := WriteBeneath(root, tc.rel, []byte("new"), 0o644, tc.replace)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("WriteBeneath = %v, want %v", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				p := filepath.Join(root, filepath.FromSlash(tc.rel))
				fi, err := os.Lstat(p)
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
					t.Fatalf("%s: %v, %v; want a regular 0644 file", p, fi, err)
				}
				if b, _ := os.ReadFile(p); string(b) != "new" {
					t.Errorf("%s holds %q", p, b)
				}
			}
			ents, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != "workflows" {
					t.Errorf("written outside the root: %s", e.Name())
				}
			}
			if ws, _ := os.ReadDir(filepath.Join(outside, "workflows")); len(ws) > 0 {
				t.Errorf("written outside the root: workflows/%s", ws[0].Name())
			}
			if es, _ := os.ReadDir(filepath.Join(root, "state", "elsewhere")); len(es) > 0 {
				t.Errorf("written through a link inside the root: %s", es[0].Name())
			}
		})
	}
}

// TestOpenDirBeneath: the root itself may be reached through a link (it
// is the caller's); beneath it no link is followed.
func TestOpenDirBeneath(t *testing.T) {
	top := t.TempDir()
	real := filepath.Join(top, "real")
	mkdir(t, filepath.Join(real, "a"))
	link(t, real, filepath.Join(top, "via"))
	d, err := OpenDirBeneath(filepath.Join(top, "via"), "a/b", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fi, err := os.Lstat(filepath.Join(real, "a", "b"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("a/b: %v, %v", fi, err)
	}
	if err := d.WriteFile("x", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(real, "a", "b", "x")); err != nil {
		t.Error(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDirBeneathSwap: a directory checked as real and swapped for a
// link before it is opened is caught: what was opened is not what was
// checked.
func TestOpenDirBeneathSwap(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "repo")
	mkdir(t, filepath.Join(root, "runs"))
	mkdir(t, filepath.Join(root, "elsewhere"))
	hookBeforeOpen = func(at string) {
		if at == filepath.Join(root, "runs") {
			if err := os.Rename(at, filepath.Join(top, "moved")); err != nil {
				t.Fatal(err)
			}
			link(t, "elsewhere", at)
		}
	}
	defer func() { hookBeforeOpen = nil }()
	if d, err := OpenDirBeneath(root, "runs", 0o755); !errors.Is(err, ErrNotPlainDir) {
		if d != nil {
			d.Close()
		}
		t.Fatalf("OpenDirBeneath = %v, want ErrNotPlainDir", err)
	}
}
