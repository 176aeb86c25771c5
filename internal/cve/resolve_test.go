package cve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/findings"
)

func TestParseGoList(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		version   string
		replaced  string
		err       string
	}{
		{"registry", `{"Path": "example.com/lib", "Version": "v1.0.0", "GoModSum": "h1:x"}`, "v1.0.0", "", ""},
		{"replaced by a directory", `{"Path": "example.com/lib", "Version": "v1.0.2", "Replace": {"Path": "./third_party/lib", "Dir": "/x"}}`, "v1.0.2", "./third_party/lib (a directory)", ""},
		{"replaced by a fork", `{"Path": "example.com/lib", "Version": "v1.0.2", "Replace": {"Path": "example.com/fork", "Version": "v1.0.3"}}`, "v1.0.2", "example.com/fork v1.0.3", ""},
		{"another module", `{"Path": "example.com/other", "Version": "v1.0.0"}`, "", "", "not \"example.com/lib\""},
		{"the main module", `{"Path": "example.com/lib", "Main": true}`, "", "", "names no version"},
		{"an error", `{"Path": "example.com/lib", "Error": {"Err": "module lookup disabled"}}`, "", "", "module lookup disabled"},
		{"not JSON", `go: errors parsing go.mod`, "", "", "go list -m -json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseGoList([]byte(tc.out), "example.com/lib")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || r.Version != tc.version || r.Replaced() != tc.replaced {
				t.Fatalf("%+v %v", r, err)
			}
		})
	}
}

func FuzzParseGoList(f *testing.F) {
	f.Add([]byte(`{"Path": "example.com/lib", "Version": "v1.0.2", "Replace": {"Path": "./x"}}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := ParseGoList(out, "example.com/lib")
		if err == nil && (r.Path != "example.com/lib" || r.Version == "") {
			t.Fatalf("accepted %+v", r)
		}
	})
}

// TestPrepareResolvesGo: red judges what go says the build uses; a build
// that uses a replacement (whatever go.mod says), or a replace of the
// target, stops the plan naming it; go failing to answer is an error, not
// a guess from go.mod.
func TestPrepareResolvesGo(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.6\n",
		"go.sum": "golang.org/x/text v0.3.6 h1:x=\ngolang.org/x/text v0.3.6/go.mod h1:y=\n",
	}
	f := &findings.Vuln{Ecosystem: "Go", Package: "golang.org/x/text", Version: "v0.3.6", Manifest: "go.mod"}
	answer := func(out string, err error) Resolver {
		return func(context.Context, string, string) (*Resolved, error) {
			if err != nil {
				return nil, err
			}
			return ParseGoList([]byte(out), "golang.org/x/text")
		}
	}
	for _, tc := range []struct {
		name    string
		extra   map[string]string
		resolve Resolver
		err     error
		detail  string
	}{
		{name: "the build selects a higher version than go.mod's", resolve: answer(`{"Path": "golang.org/x/text", "Version": "v0.3.7"}`, nil), detail: "v0.3.7 in go.mod:5 (require), as the build resolves it"},
		{name: "the build uses a directory", resolve: answer(`{"Path": "golang.org/x/text", "Version": "v0.3.7", "Replace": {"Path": "../fork"}}`, nil), err: ErrUnbumpable, detail: "uses ../fork (a directory)"},
		{name: "go cannot answer", resolve: answer("", errors.New("exit 1: module lookup disabled")), err: ErrNotResolved, detail: "module lookup disabled"},
		{name: "go.work replaces the target", extra: map[string]string{"go.work": "go 1.21\n\nuse .\n\nreplace golang.org/x/text v0.3.8 => ./vendored\n"},
			resolve: answer(`{"Path": "golang.org/x/text", "Version": "v0.3.7"}`, nil), err: ErrUnbumpable, detail: "go.work:5: replace v0.3.8 => ./vendored: a bump to v0.3.8"},
		{name: "go.mod replaces the installed version", extra: map[string]string{"go.mod": files["go.mod"] + "\nreplace golang.org/x/text v0.3.6 => example.com/fork v0.3.9\n"},
			resolve: nil, err: ErrUnbumpable, detail: "go.mod:7: replace v0.3.6 => example.com/fork v0.3.9: the build does not use the registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := map[string]string{}
			for k, v := range files {
				fs[k] = v
			}
			for k, v := range tc.extra {
				fs[k] = v
			}
			root := tree(t, fs)
			ty := &Type{Source: newMemSource(t, "go_text"), Resolve: tc.resolve}
			p, err := ty.Prepare(ctx, root, f)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			got := p.Red.Detail
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.detail) {
				t.Fatalf("%q does not say %q", got, tc.detail)
			}
		})
	}
}

// TestVerifyResolvesGo: after the bump, green asks the build again; a
// replacement it uses is never "no known advisory affects".
func TestVerifyResolvesGo(t *testing.T) {
	ctx := context.Background()
	root := tree(t, map[string]string{
		"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.7\n",
		"go.sum": "golang.org/x/text v0.3.7 h1:x=\ngolang.org/x/text v0.3.7/go.mod h1:y=\n",
	})
	f := &findings.Vuln{Ecosystem: "Go", Package: "golang.org/x/text", Version: "v0.3.7", Manifest: "go.mod"}
	version, replace := "v0.3.7", ""
	ty := &Type{Source: newMemSource(t, "go_text"), Resolve: func(context.Context, string, string) (*Resolved, error) {
		return ParseGoList([]byte(`{"Path": "golang.org/x/text", "Version": "`+version+`"`+replace+`}`), "golang.org/x/text")
	}}
	p, err := ty.Prepare(ctx, root, f)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, "go.mod", "module example.com/app\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.8\n")
	write(t, root, "go.sum", "golang.org/x/text v0.3.8 h1:x=\ngolang.org/x/text v0.3.8/go.mod h1:y=\n")
	version = "v0.3.8"
	if g := ty.Verify(ctx, root, p); g.Verdict != Green {
		t.Fatalf("registry v0.3.8: %+v", g)
	}
	replace = `, "Replace": {"Path": "./third_party/fakelib"}`
	g := ty.Verify(ctx, root, p)
	if g.Verdict != StillRed || g.Checks[0].OK || !strings.Contains(g.Checks[0].Detail, "uses ./third_party/fakelib (a directory)") {
		t.Fatalf("replaced v0.3.8: %+v", g)
	}
	for _, c := range g.Checks {
		if strings.Contains(c.Detail, "no known advisory affects") {
			t.Fatalf("claims clean: %+v", g)
		}
	}
}
