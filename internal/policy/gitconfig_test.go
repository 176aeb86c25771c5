package policy

import (
	"strings"
	"testing"
)

func TestGitConfigRisk(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // "" when the file sets nothing git runs
	}{
		{"empty", "", ""},
		{"identity", "[user]\n\tname = CI\n\temail = ci@example.com\n", ""},
		{"comments", "# top\n; also\n[init] ; trailing\n\tdefaultBranch = main # here\n", ""},
		{"boolean", "[core]\n\tbare\n", ""},
		{"push-default", "[push]\n\tdefault = simple\n", ""},
		{"crlf", "[user]\r\n\tname = CI\r\n", ""},
		{"fsmonitor", "[core]\n\tfsmonitor = x\n", "core.fsmonitor"},
		{"case", "[CORE]\n\tFsMonitor = x\n", "core.fsmonitor"},
		{"subsection", "[filter \"lfs\"]\n\tsmudge = x\n", "filter.smudge"},
		{"legacy-subsection", "[remote.origin]\n\tpushurl = x\n", "remote.pushurl"},
		{"alias", "[alias]\n\tco = checkout\n", "alias.co"},
		{"include", "[include]\n\tpath = other.cfg\n", "include.path"},
		{"includeif", "[includeIf \"gitdir:~/w/\"]\n\tpath = w.cfg\n", "includeif.path"},
		{"url", "[url \"https://evil/\"]\n\tinsteadOf = https://github.com/\n", "url.insteadof"},
		{"remote-push", "[remote \"origin\"]\n\tpush = +HEAD:main\n", "remote.push"},
		{"continued", "[user]\n\tname = a \\\n\tfsmonitor = x\n", "a continued line (line 2)"},
		{"key-on-section-line", "[core] fsmonitor = x\n", "a section line it cannot read (line 1)"},
		{"unclosed-section", "[core\n\tfsmonitor = x\n", "a section line it cannot read (line 1)"},
		{"outside-section", "fsmonitor = x\n", "a variable outside a section (line 1)"},
		{"odd-name", "[core]\n\tfs_monitor = x\n", "a line it cannot read (line 2)"},
		{"binary", "[core]\x00", "binary content"},
	} {
		key, ok := gitConfigRisk([]byte(c.in))
		if (c.want != "") != ok || key != c.want {
			t.Errorf("%s: gitConfigRisk = %q, %v; want %q", c.name, key, ok, c.want)
		}
	}
}

// FuzzGitConfigRisk: nothing before a risky key hides it, and the reader
// never panics.
func FuzzGitConfigRisk(f *testing.F) {
	for _, s := range []string{"", "[user]\n\tname = x\n", "[core] ; c\n", "[a \"b]\"]\n", "\\\n", "[x]\n\ty = \"z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gitConfigRisk([]byte(s))
		if _, ok := gitConfigRisk([]byte(s + "\n[core]\n\tfsmonitor = x\n")); !ok {
			t.Fatalf("a core.fsmonitor after %q was not found", s)
		}
		if strings.IndexByte(s, 0) < 0 {
			if _, ok := gitConfigRisk([]byte(s + "\n[core]\n\tbare\n")); ok {
				if _, before := gitConfigRisk([]byte(s)); !before {
					t.Fatalf("a plain core.bare after %q was judged risky", s)
				}
			}
		}
	})
}
