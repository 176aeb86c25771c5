package cli

import (
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
