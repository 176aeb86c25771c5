package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseConfigPin(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    ConfigPin
		wantErr string
	}{
		{in: "filter.lfs.process=git-lfs filter-process", want: ConfigPin{"filter.lfs.process", "git-lfs filter-process"}},
		{in: "Filter.LFS.Process=git-lfs filter-process", want: ConfigPin{"filter.LFS.process", "git-lfs filter-process"}},
		{in: "includeIf.gitdir:/src/.path=../shared.cfg", want: ConfigPin{"includeif.gitdir:/src/.path", "../shared.cfg"}},
		{in: "include.path=../gitconfig", want: ConfigPin{"include.path", "../gitconfig"}},
		{in: "core.pager=", want: ConfigPin{"core.pager", ""}},
		{in: "diff.x.textconv=a=b", want: ConfigPin{"diff.x.textconv", "a=b"}},
		{in: "credential.https://h/x.y.helper=!gh auth git-credential", want: ConfigPin{"credential.https://h/x.y.helper", "!gh auth git-credential"}},
		{in: "filter.lfs.process", wantErr: `"filter.lfs.process" is a key alone; an entry is key=value`},
		{in: "include.path", wantErr: "is a key alone"},
		{in: "=x", wantErr: "is not key=value"},
		{in: "pager=x", wantErr: "is not key=value"},
		{in: "core.=x", wantErr: "is not key=value"},
		{in: ".pager=x", wantErr: "is not key=value"},
		{in: "co re.pager=x", wantErr: "is not key=value"},
		{in: "core.1pager=x", wantErr: "is not key=value"},
		{in: "filter.a\nb.clean=x", wantErr: "is not key=value"},
		{in: "core.pager=a\x00b", wantErr: "is not key=value"},
	} {
		got, err := ParseConfigPin(tc.in)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseConfigPin(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("ParseConfigPin(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestParseAllowConfig: the file's entries are parsed as pins, and the
// format before values were pinned is a configuration error naming the
// new one.
func TestParseAllowConfig(t *testing.T) {
	cfg, err := Parse("fixrail.yaml", []byte(valid+"git: {allow_config: [\"filter.lfs.process=git-lfs filter-process\", \"include.path=../gitconfig\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Git.Pins(); len(got) != 2 || got[0] != (ConfigPin{"filter.lfs.process", "git-lfs filter-process"}) || got[1] != (ConfigPin{"include.path", "../gitconfig"}) {
		t.Errorf("Pins = %v", got)
	}
	_, err = Parse("fixrail.yaml", []byte(valid+"git: {allow_config: [filter.lfs.process]}\n"))
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "key=value") {
		t.Errorf("bare key: err = %v, want a config error naming key=value", err)
	}
}

func FuzzParseConfigPin(f *testing.F) {
	for _, s := range []string{"filter.lfs.process=git-lfs filter-process", "include.path", "a.b.c=", "X.y=z", "=", "a.=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseConfigPin(s)
		if err != nil {
			return
		}
		// What it accepts, written back as key=value, reads the same.
		again, err := ParseConfigPin(p.Key + "=" + p.Value)
		if err != nil || again != p {
			t.Fatalf("round trip of %q: %v, %v; want %v", s, again, err, p)
		}
		if strings.ContainsRune(p.Key, '=') || strings.ContainsRune(p.Value, 0) {
			t.Fatalf("%q parsed as %+v", s, p)
		}
		// The input's key, section and name folded, subsection kept.
		in := s[:strings.IndexByte(s, '=')]
		first, last := strings.IndexByte(in, '.'), strings.LastIndexByte(in, '.')
		if len(in) != len(p.Key) || !strings.EqualFold(in, p.Key) || in[first:last] != p.Key[first:last] {
			t.Fatalf("%q: key %q is not the input's key", s, p.Key)
		}
	})
}
