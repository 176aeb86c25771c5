package resolvecmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		pos     []string
		json    bool
		wantErr string
	}{
		{[]string{"go", "m", "v1"}, []string{"go", "m", "v1"}, false, ""},
		{[]string{"--json", "go", "m", "v1"}, []string{"go", "m", "v1"}, true, ""},
		{[]string{"go", "--json", "m", "v1"}, []string{"go", "m", "v1"}, true, ""},
		{[]string{"go", "m", "v1", "--json"}, []string{"go", "m", "v1"}, true, ""},
		{[]string{"npm", "--", "--json", "1.0.0"}, []string{"npm", "--json", "1.0.0"}, false, ""},
		{[]string{"go", "--nope"}, nil, false, "flag provided but not defined: -nope"},
		{[]string{"go", "-h"}, nil, false, flag.ErrHelp.Error()},
	} {
		fs, o := Flags()
		pos, err := Parse(fs, tc.args)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: err %v, want %q", tc.args, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.As(err, new(*UsageError)) {
				t.Errorf("%q: %T is neither help nor a usage error", tc.args, err)
			}
			continue
		}
		if err != nil || !slices.Equal(pos, tc.pos) || o.JSON != tc.json {
			t.Errorf("%q: pos %q json %v err %v, want %q %v", tc.args, pos, o.JSON, err, tc.pos, tc.json)
		}
	}
}

// TestMainExitCodes: what the slim binary exits and says for each outcome
// that needs no advisory service.
func TestMainExitCodes(t *testing.T) {
	cache := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no arguments", nil, ExitUsage, "(0 given)"},
		{"unknown ecosystem", []string{"packagist", "a/b", "1.0"}, ExitUsage, "unknown ecosystem"},
		{"unorderable version", []string{"go", "m", "one"}, ExitUsage, "fixrail-resolve: "},
		{"control character in the name", []string{"npm", "a\x1bb", "1.0.0"}, ExitUsage, "printable"},
		{"both forms", []string{"npm", "a", "1.0.0", "--vuln", "x.json"}, ExitUsage, "not both"},
		{"bad URL", []string{"npm", "a", "1.0.0", "--osv-url", "ftp://x"}, ExitUsage, "want http"},
		{"offline miss", []string{"resolve-version", "npm", "a", "1.0.0", "--offline", "--cache-dir", cache}, ExitNoAnswer, "not in the cache"},
		{"help", []string{"-h"}, ExitDecided, ""},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%s: exit %d stderr %q, want %d and %q", tc.name, code, errb.String(), tc.code, tc.stderr)
		}
		if tc.code == ExitUsage && !strings.Contains(errb.String(), "fixrail-resolve -h") {
			t.Errorf("%s: a usage error does not point at the help: %q", tc.name, errb.String())
		}
		if tc.code != ExitDecided && out.Len() > 0 {
			t.Errorf("%s: stdout %q on a failure", tc.name, out.String())
		}
	}
}

// An error that says no code is a failure to answer, never a decision.
func TestMainUncodedErrorIsNoAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	vuln := dir + "/scan.json"
	if err := writeFile(vuln, `[{"ecosystem":"npm","package":"a","version":"1.0.0","advisories":["GHSA-aaaa-bbbb-cccc"]}]`); err != nil {
		t.Fatal(err)
	}
	code := Main(ctx, []string{"--vuln", vuln, "--offline", "--cache-dir", dir}, &out, &errb)
	if code != ExitNoAnswer || !strings.Contains(errb.String(), "context canceled") {
		t.Errorf("canceled: exit %d stderr %q, want %d and the cause", code, errb.String(), ExitNoAnswer)
	}
}

func TestHelpIsWhole(t *testing.T) {
	var b bytes.Buffer
	Help(&b, "fixrail-resolve")
	for _, want := range []string{"Usage: fixrail-resolve (ECOSYSTEM", "Exit codes:", "-offline", "-vuln file", "fixrail-resolve"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
