package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMain points HOME at an empty directory: gitx passes HOME through, and
// the developer's ~/.gitconfig must not change what these tests see.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "gitx-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Unsetenv("XDG_CONFIG_HOME")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func TestCommandRails(t *testing.T) {
	t.Setenv("FIXRAIL_TEST_TOKEN", "secret")
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/planted'")
	t.Setenv("LANG", "C.UTF-8")

	cmd, err := (&Repo{}).command(context.Background(), invocation{dir: "/d", args: []string{"status", "--", "x"}, env: []string{"EXTRA=1"}})
	if err != nil {
		t.Fatal(err)
	}

	argv := cmd.Args[1:]
	if got, want := argv[len(argv)-3:], []string{"status", "--", "x"}; !slices.Equal(got, want) {
		t.Errorf("argv ends with %q, want %q", got, want)
	}
	prefix := strings.Join(argv[:len(argv)-3], " ")
	want := []string{
		"-c core.hooksPath=/dev/null", "-c core.fsmonitor=false", "-c protocol.allow=never",
		"-c credential.helper=", "-c core.askPass=", "-c core.sshCommand=false",
		"-c core.attributesFile=/dev/null", "-c commit.gpgSign=false", "-c tag.gpgSign=false",
	}
	for _, ev := range hookEvents {
		want = append(want, "-c hook."+ev+".enabled=false")
	}
	for _, w := range want {
		if !strings.Contains(prefix+" ", w+" ") {
			t.Errorf("prefix lacks %q", w)
		}
	}
	if len(hookEvents) != 28 {
		t.Errorf("hookEvents has %d entries, githooks(5) lists 28", len(hookEvents))
	}

	env := map[string]string{}
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, name := range []string{"FIXRAIL_TEST_TOKEN", "GIT_DIR", "GIT_CONFIG_PARAMETERS"} {
		if _, ok := env[name]; ok {
			t.Errorf("env passes %s", name)
		}
	}
	for k, v := range map[string]string{
		"LANG": "C.UTF-8", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
		"GIT_CONFIG_NOSYSTEM": "1", "EXTRA": "1", "HOME": os.Getenv("HOME"),
	} {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("env %s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	if cmd.Dir != "/d" {
		t.Errorf("Dir = %q, want /d", cmd.Dir)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"first line only", &Error{Args: []string{"rev-parse", "x"}, ExitCode: 128, Stderr: "fatal: bad\nhint: more\n"}, "git rev-parse: exit 128: fatal: bad"},
		{"no stderr", &Error{Args: []string{"show-ref"}, ExitCode: 1}, "git show-ref: exit 1"},
		{"no args", &Error{ExitCode: 2, Stderr: "  x  "}, "git ?: exit 2: x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, t.TempDir())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with cancelled ctx = %v, want context.Canceled", err)
	}
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"a.txt", true},
		{"dir/sub/a.txt", true},
		{".gitignore", true},
		{"a..b", true},
		{"", false},
		{"/etc/passwd", false},
		{"../x", false},
		{"a/../b", false},
		{"./a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{".git/config", false},
		{"sub/.GIT/hooks/x", false},
		{"a\x00b", false},
		{`a\b`, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			err := checkPath(tc.path)
			if (err == nil) != tc.ok {
				t.Errorf("checkPath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Change
		bad  bool
	}{
		{"empty", "", nil, false},
		{
			"mixed, sorted",
			" M z.txt\x00?? a/b/c.txt\x00D  gone.txt\x00!! x.log\x00MM both.txt\x00",
			[]Change{{"a/b/c.txt", "??"}, {"both.txt", "MM"}, {"gone.txt", "D"}, {"x.log", "!!"}, {"z.txt", "M"}},
			false,
		},
		{"rename gives both paths", "R  new.txt\x00old.txt\x00", []Change{{"new.txt", "R"}, {"old.txt", "R"}}, false},
		{"path with spaces", "?? a b.txt\x00", []Change{{"a b.txt", "??"}}, false},
		{"truncated rename", "R  new.txt\x00", nil, true},
		{"garbage", "xyz\x00", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tc.in))
			if (err != nil) != tc.bad {
				t.Fatalf("parseStatus err = %v, want error %v", err, tc.bad)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNumstat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Diff
		bad  bool
	}{
		{"empty", "", Diff{}, false},
		{"text and binary", "3\t1\tb.txt\x00-\t-\tbin.dat\x000\t2\ta.txt\x00", Diff{Added: 3, Deleted: 3, Files: []string{"a.txt", "b.txt", "bin.dat"}}, false},
		{"tab in path", "1\t0\ta\tb\x00", Diff{Added: 1, Files: []string{"a\tb"}}, false},
		{"not a number", "x\t0\ta\x00", Diff{}, true},
		{"short record", "1\t0\x00", Diff{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Diff
			err := parseNumstat([]byte(tc.in), &got)
			if (err != nil) != tc.bad {
				t.Fatalf("parseNumstat err = %v, want error %v", err, tc.bad)
			}
			if tc.bad {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseNumstat (-want +got):\n%s", diff)
			}
		})
	}
}
