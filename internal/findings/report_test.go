package findings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fixrail/fixrail/internal/pathguard"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		want             *Finding
		err              string
	}{
		{
			name: "json", file: "r.json",
			data: `{"id": "42", "title": "crash", "body": "b", "labels": ["bug"], "comments": ["c1"]}`,
			want: &Finding{ID: "42", Title: "crash", Body: "b", Labels: []string{"bug"}, Comments: []string{"c1"}},
		},
		{
			name: "numeric id", file: "r.json",
			data: `{"id": 7, "title": "t"}`,
			want: &Finding{ID: "7", Title: "t"},
		},
		{
			name: "markdown", file: "issue-9.md",
			data: "intro line\n\n## Crash on empty input\n\nsteps\n# second heading stays\n",
			want: &Finding{ID: "issue-9", Title: "Crash on empty input", Body: "intro line\n\n\nsteps\n# second heading stays"},
		},
		{
			name: "evidence", file: "r.json",
			data: `{"id": "g1", "title": "t", "fix_type": "sast", "evidence": {"path": "./db/q.go", "line": 12, "end_line": 13, "rule": "G201", "tool": "gosec", "severity": "high", "snippet": "db.Query(q)"}}`,
			want: &Finding{ID: "g1", Title: "t", FixType: "sast", Evidence: &Evidence{Path: "db/q.go", Line: 12, EndLine: 13, Rule: "G201", Tool: "gosec", Severity: "high", Snippet: "db.Query(q)"}},
		},
		{
			// A secret is named by its digest; its snippet (the secret) is dropped.
			name: "secret evidence", file: "r.json",
			data: `{"id": "k1", "title": "t", "fix_type": "secret", "evidence": {"path": "cfg.go", "line": 3, "secret_sha256": "` + strings.Repeat("AB", 32) + `", "snippet": "the value"}}`,
			want: &Finding{ID: "k1", Title: "t", FixType: "secret", Evidence: &Evidence{Path: "cfg.go", Line: 3, SecretSHA256: strings.Repeat("ab", 32)}},
		},
		{name: "evidence unknown key", file: "r.json", data: `{"id": "1", "title": "t", "evidence": {"path": "a", "secret": "x"}}`, err: `unknown field "secret"`},
		{name: "evidence escaping path", file: "r.json", data: `{"id": "1", "title": "t", "evidence": {"path": "../etc/passwd"}}`, err: "evidence: path"},
		{name: "evidence bad severity", file: "r.json", data: `{"id": "1", "title": "t", "evidence": {"path": "a", "severity": "urgent"}}`, err: "severity"},
		{name: "evidence end before line", file: "r.json", data: `{"id": "1", "title": "t", "evidence": {"path": "a", "line": 5, "end_line": 2}}`, err: "end_line"},
		{name: "evidence bad digest", file: "r.json", data: `{"id": "1", "title": "t", "evidence": {"path": "a", "secret_sha256": "abc"}}`, err: "secret_sha256"},
		{name: "unknown json key", file: "r.json", data: `{"id": "1", "title": "t", "assignee": "x"}`, err: `unknown field "assignee"`},
		{name: "no id", file: "r.json", data: `{"title": "t"}`, err: "no id"},
		{name: "traversal id", file: "r.json", data: `{"id": "../../x", "title": "t"}`, err: "not a safe name"},
		{name: "dash id", file: "r.json", data: `{"id": "-rf", "title": "t"}`, err: "not a safe name"},
		{name: "lock id", file: "r.json", data: `{"id": "a.lock", "title": "t"}`, err: "not a safe name"},
		{name: "no title", file: "r.json", data: `{"id": "1", "title": "  "}`, err: "no title"},
		{name: "markdown without heading", file: "x.md", data: "just text\n", err: "no title"},
		{name: "trailing data", file: "r.json", data: `{"id": "1", "title": "t"} {}`, err: "trailing data"},
		{name: "not utf8", file: "r.json", data: "{\"id\": \"1\", \"title\": \"\xff\"}", err: "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.file, []byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadReport) {
					t.Fatalf("err = %v, want ErrBadReport containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxReportBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("oversized report: err = %v", err)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory as report: err = %v", err)
	}
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{"id":"1","title":"t"}`), 0o600)
	f, err := ReadFile(ok)
	if err != nil || f.Source != ok {
		t.Errorf("ReadFile = %+v, %v", f, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("r.json", []byte(`{"id": "42", "title": "t"}`))
	f.Add("r.md", []byte("# title\nbody"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		fin, err := Parse(name, data)
		if err == nil && !pathguard.SafeName(fin.ID) {
			t.Fatalf("accepted unsafe id %q", fin.ID)
		}
	})
}
