package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/batch"
)

// TestChildArgs: the run line a batch starts for each kind of item — a
// SARIF result by its log and id, a scan's item on the base it was
// scanned against unless --base names one for all.
func TestChildArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		it   batch.Item
		pass []string
		want string
	}{
		{"sarif", batch.Item{ID: "gosec-0123456789abcdef", Kind: "sarif", File: "/w/gosec.sarif"}, nil,
			"run --json --sarif /w/gosec.sarif --result gosec-0123456789abcdef --repo proj"},
		{"sarif from a scan, its base", batch.Item{ID: "gosec-0123456789abcdef", Kind: "sarif", File: "/w/gosec.sarif", Base: "dev"}, nil,
			"run --json --sarif /w/gosec.sarif --result gosec-0123456789abcdef --repo proj --base dev"},
		{"issue, its base", batch.Item{ID: "gh-7", Kind: "issue", File: "7", Repo: "o/r", Base: "dev"}, []string{"--dry-run=true"},
			"run --json --repo o/r --dir proj --issue 7 --base dev --dry-run=true"},
		{"--base wins", batch.Item{ID: "gh-7", Kind: "issue", File: "7", Repo: "o/r", Base: "dev"}, []string{"--base=main"},
			"run --json --repo o/r --dir proj --issue 7 --base=main"},
		{"report", batch.Item{ID: "s1", Kind: "report", File: "r/s1.json"}, nil, "run --json --report r/s1.json --repo proj"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(childArgs(tc.it, "proj", "", false, tc.pass), " ")
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			// It parses as run's own flags.
			fs, _ := runFlags()
			if err := fs.Parse(childArgs(tc.it, "proj", "", false, tc.pass)[1:]); err != nil || fs.NArg() != 0 {
				t.Fatalf("%v: %v %v", got, err, fs.Args())
			}
		})
	}
}

// TestPruneBatches: the newest keep batch directories stay, older ones
// go; anything not named as fixrail names them is left alone.
func TestPruneBatches(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"20261201T000000Z-1", "20261203T000000Z-9", "20261202T000000Z-5", "20261204T000000Z-2", "notes", "2026-x"} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	target := t.TempDir()
	writeFile(t, filepath.Join(target, "keep.txt"), "x")
	if err := os.Symlink(target, filepath.Join(dir, "20261130T000000Z-3")); err != nil {
		t.Fatal(err)
	}
	pruneBatches(dir, 2)
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if want := []string{"2026-x", "20261203T000000Z-9", "20261204T000000Z-2", "notes"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("left %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(target, "keep.txt")); err != nil {
		t.Fatalf("a link's target was removed: %v", err)
	}
}
