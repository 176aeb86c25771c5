package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/google/go-cmp/cmp"
)

// operatorConfig points the operator's system and global git config at new
// files holding system and global, the way an operator's own environment
// would, and returns their paths. It uses t.Setenv: not for parallel tests.
func operatorConfig(t *testing.T, system, global string) (sysPath, globalPath string) {
	t.Helper()
	dir := t.TempDir()
	sysPath, globalPath = filepath.Join(dir, "system"), filepath.Join(dir, "global")
	for p, body := range map[string]string{sysPath: system, globalPath: global} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GIT_CONFIG_SYSTEM", sysPath)
	t.Setenv("GIT_CONFIG_GLOBAL", globalPath)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "")
	os.Unsetenv("GIT_CONFIG_NOSYSTEM")
	return sysPath, globalPath
}

// takeSnapshot is Snapshot of system and global, closed when t ends.
func takeSnapshot(t *testing.T, system, global string) *Snap {
	t.Helper()
	operatorConfig(t, system, global)
	s, err := Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// listFile is `git config --file path --list -z`, read by plain git.
func listFile(t *testing.T, path string) []configEntry {
	t.Helper()
	cmd := exec.Command("git", "config", "--file", path, "--no-includes", "--list", "-z")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git config --file %s --list: %v", path, err)
	}
	entries, err := parseConfigList(out, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestSnapshotRoundTrip writes awkward values into the operator's config
// with git itself and checks that the snapshot reads back as exactly the
// same entries, in the same order, includes inlined and dropped.
func TestSnapshotRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	included := filepath.Join(dir, "included.cfg")
	conditional := filepath.Join(dir, "conditional.cfg")
	if err := os.WriteFile(included, []byte("[inc]\n\tkey = from the include\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conditional, []byte("[cond]\n\tkey = fired\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sysPath, globalPath := operatorConfig(t, "", "")

	values := []struct{ key, value string }{
		{"t.plain", "value"},
		{"t.quote", `a "quoted" word`},
		{"t.backslash", `C:\path\to\ and \\ double`},
		{"t.trailingbackslash", `ends with \`},
		{"t.tab", "a\tb"},
		{"t.newline", "line1\nline2\n"},
		{"t.spaces", "  leading and trailing  "},
		{"t.comment", "x # not a comment ; nor this"},
		{"t.empty", ""},
		{"t.unicode", "héllo ✓ 日本"},
		{"t.cr", "a\rb\r"},
		{"t.backspace", "a\bb"},
		{"t.equals", "k=v=w"},
		{"t.multi", "one"},
		{"t.multi", "two"},
		{"t.multi", ""},
		{"t.multi", "one"},
		{`url.https://Example.COM/a b"q\.insteadOf`, "https://mirror/"},
		{"credential.https://host:8443/path.helper", ""},
		{"credential.https://host:8443/path.helper", "!f() { echo \"password=$(cat ~/x)\"; }; f"},
		{"my-sect.Key-2", "dash"},
		{`empty..sub`, "empty subsection"},
	}
	gittest.Git(t, "", "config", "--file", sysPath, "sys.first", "system scope")
	for _, v := range values {
		gittest.Git(t, "", "config", "--file", globalPath, "--add", v.key, v.value)
	}
	gittest.Git(t, "", "config", "--file", globalPath, "--add", "include.path", included)
	gittest.Git(t, "", "config", "--file", globalPath, "--add", "includeIf.gitdir:/.path", conditional)
	f, err := os.OpenFile(globalPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "[t]\n\tnovalue\n") // true, distinct from t.empty: git config cannot write this
	f.Close()

	s, err := Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	want := listFile(t, sysPath)
	for _, e := range listFile(t, globalPath) {
		switch e.Key {
		case "include.path":
			want = append(want, configEntry{Key: "inc.key", HasValue: true, Value: "from the include"})
		case "includeif.gitdir:/.path":
		default:
			want = append(want, e)
		}
	}
	got := listFile(t, s.Path())
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("snapshot read back (-want +got):\n%s", d)
	}

	// Independently of git's reading of its own output: a few literals.
	byKey := map[string][]configEntry{}
	for _, e := range got {
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	for key, wantVals := range map[string][]string{
		"t.newline":   {"line1\nline2\n"},
		"t.cr":        {"a\rb\r"},
		"t.multi":     {"one", "two", "", "one"},
		"t.empty":     {""},
		"t.backslash": {`C:\path\to\ and \\ double`},
		`url.https://Example.COM/a b"q\.insteadof`: {"https://mirror/"},
	} {
		var vals []string
		for _, e := range byKey[key] {
			vals = append(vals, e.Value)
		}
		if !cmp.Equal(vals, wantVals) {
			t.Errorf("%s = %q, want %q", key, vals, wantVals)
		}
	}
	if nv := byKey["t.novalue"]; len(nv) != 1 || nv[0].HasValue {
		t.Errorf("t.novalue = %+v, want one entry without a value", nv)
	}
	for _, k := range []string{"include.path", "includeif.gitdir:/.path", "cond.key"} {
		if _, ok := byKey[k]; ok {
			t.Errorf("snapshot holds %s", k)
		}
	}

	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o400 {
		t.Errorf("snapshot mode %v, want 0400", perm)
	}
	di, err := os.Stat(filepath.Dir(s.Path()))
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("snapshot directory mode %v, want 0700", perm)
	}
	if len(s.SHA256()) != 64 || s.GitVersion() == "" {
		t.Errorf("SHA256 %q, GitVersion %q", s.SHA256(), s.GitVersion())
	}
}

// TestSnapshotInForce shows a Repo reading the snapshot, not the live
// global file, and not the system file at all.
func TestSnapshotInForce(t *testing.T) {
	ctx := context.Background()
	_, globalPath := operatorConfig(t, "[sys]\n\tkey = system\n", "[op]\n\tkey = at start\n")
	s, err := Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := gittest.NewRepo(t, nil)
	r, err := s.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(globalPath, []byte("[op]\n\tkey = rewritten mid-run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	get := func(key string) string {
		out, err := r.run(ctx, invocation{dir: r.top, args: []string{"config", "--get", key}})
		if exitCode(err) == 1 {
			return "<unset>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := get("op.key"); got != "at start" {
		t.Errorf("op.key = %q, want the snapshot's %q", got, "at start")
	}
	// The system value reaches the Repo through the snapshot, once.
	out, err := r.run(ctx, invocation{dir: r.top, args: []string{"config", "--list", "--show-scope", "-z"}})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := parseConfigList(out, true, false)
	for _, e := range entries {
		if e.Key == "sys.key" && e.Scope != "global" {
			t.Errorf("sys.key read in scope %s: the live system file is in use", e.Scope)
		}
	}
	if got := get("sys.key"); got != "system" {
		t.Errorf("sys.key = %q, want it carried in the snapshot", got)
	}

	// Without a snapshot, no operator config at all.
	bare, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.run(ctx, invocation{dir: dir, args: []string{"config", "--get", "op.key"}}); exitCode(err) != 1 {
		t.Errorf("Repo without snapshot: config --get op.key = %v, want unset (exit 1)", err)
	}
}

// TestSnapshotAltered: a snapshot changed, replaced or removed after it was
// written fails every later call closed, before git runs.
func TestSnapshotAltered(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		alter func(t *testing.T, path string)
	}{
		{"rewritten", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("[core]\n\thooksPath = /planted\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"appended", func(t *testing.T, path string) {
			os.Chmod(path, 0o600)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprint(f, "[credential]\n\thelper = /planted\n")
			f.Close()
		}},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to the same bytes", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copyPath := filepath.Join(t.TempDir(), "copy")
			if err := os.WriteFile(copyPath, data, 0o400); err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
			if err := os.Symlink(copyPath, path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := takeSnapshot(t, "", "[op]\n\tkey = v\n")
			r, err := s.Open(ctx, gittest.NewRepo(t, nil))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.RevParse(ctx, "HEAD"); err != nil {
				t.Fatalf("before: %v", err)
			}
			tc.alter(t, s.Path())
			if err := s.Verify(); !errors.Is(err, ErrSnapshot) {
				t.Errorf("Verify = %v, want ErrSnapshot", err)
			}
			if _, err := r.RevParse(ctx, "HEAD"); !errors.Is(err, ErrSnapshot) {
				t.Errorf("RevParse after the snapshot was %s = %v, want ErrSnapshot", tc.name, err)
			}
		})
	}
}

func TestSnapshotClose(t *testing.T) {
	ctx := context.Background()
	operatorConfig(t, "", "")
	s, err := Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, gittest.NewRepo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshot directory still there after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := r.RevParse(ctx, "HEAD"); !errors.Is(err, ErrSnapshot) {
		t.Errorf("RevParse after Close = %v, want ErrSnapshot", err)
	}

	// Something planted beside the snapshot is not deleted with it.
	s2, err := Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(filepath.Dir(s2.Path()), "planted")
	if err := os.WriteFile(planted, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err == nil {
		t.Error("Close of a directory holding a foreign file = nil, want error")
	}
	if _, err := os.Stat(planted); err != nil {
		t.Errorf("foreign file removed: %v", err)
	}
	os.RemoveAll(filepath.Dir(s2.Path()))
}

// TestGitTooOld puts a git on PATH that reports 2.31 and passes everything
// else to the real one: Snapshot and GitVersion refuse it.
func TestGitTooOld(t *testing.T) {
	ctx := context.Background()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		old     bool
	}{
		{"git version 2.31.8", true},
		{"git version 1.9.5", true},
		{"git version 2.32.0", false},
		{"git version 2.50.1 (Apple Git-155)", false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			bin := t.TempDir()
			script := fmt.Sprintf("#!/bin/sh\nfor a; do last=$a; done\nif [ \"$last\" = version ]; then echo '%s'; exit 0; fi\nexec '%s' \"$@\"\n", tc.version, real)
			if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			operatorConfig(t, "", "")
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			s, err := Snapshot(ctx)
			if s != nil {
				defer s.Close()
			}
			if got := errors.Is(err, ErrGitTooOld); got != tc.old {
				t.Fatalf("Snapshot with %q = %v; want ErrGitTooOld %v", tc.version, err, tc.old)
			}
			if _, err := GitVersion(ctx); errors.Is(err, ErrGitTooOld) != tc.old {
				t.Errorf("GitVersion with %q = %v", tc.version, err)
			}
		})
	}
}

func TestCheckGitVersion(t *testing.T) {
	tests := []struct {
		out  string
		want string // "" means refused
	}{
		{"git version 2.39.5\n", "2.39.5"},
		{"git version 2.32.0.windows.1", "2.32.0.windows.1"},
		{"git version 2.39.3 (Apple Git-145)", "2.39.3"},
		{"git version 2.40.0-rc0", "2.40.0-rc0"},
		{"git version 3.0", "3.0"},
		{"git version 2.32", "2.32"},
		{"git version 2.31.99", ""},
		{"git version 2.9.0", ""},
		{"git version 1.99.0", ""},
		{"git version two", ""},
		{"version 2.40.0", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, err := checkGitVersion(tc.out)
		if tc.want == "" {
			if !errors.Is(err, ErrGitTooOld) {
				t.Errorf("checkGitVersion(%q) = %q, %v; want ErrGitTooOld", tc.out, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("checkGitVersion(%q) = %q, %v; want %q", tc.out, got, err, tc.want)
		}
	}
}

func TestEncodeConfigRefuses(t *testing.T) {
	for _, key := range []string{"nodot", ".name", "sect.", "sect.sub.-name", "se ct.name", "sect.a\nb.name"} {
		if _, err := encodeConfig([]configEntry{{Key: key, HasValue: true, Value: "v"}}); err == nil {
			t.Errorf("encodeConfig(%q) = nil error", key)
		}
	}
}
