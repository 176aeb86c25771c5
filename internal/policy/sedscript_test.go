package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestSedScript(t *testing.T) {
	for _, c := range []struct {
		script string
		want   sedEffects
	}{
		// Edits only.
		{script: `s/foo/bar/g`},
		{script: `1,20p`},
		{script: `/^#/d;s/\s+$//`},
		{script: `s|/usr/local|/opt|g`},
		{script: `s/e/w/`},      // e and w in a regular expression are letters
		{script: `s/x/y/gI;3q`}, // flags, then q with a count
		{script: `/start/,/end/{/x/d;p}`},
		{script: `$a\` + "\n" + `last line`},
		{script: `1i # header; w not a file`}, // i takes the rest of its line
		{script: `y/abc/xyz/`},
		{script: `:a;N;$!ba;s/\n/ /g`},
		{script: `\,/tmp/x,d`},
		{script: `0~3d`},
		{script: `/x/I,+2s/a/b/`},
		{script: dynMark + `,` + dynMark + `p`},         // sed -n "${A},${B}p"
		{script: `s/` + dynMark + `/` + dynMark + `/g`}, // sed "s/$OLD/$NEW/g"
		{script: `# comment only`},
		{script: `r /etc/hosts`},

		// Runs and writes.
		{script: `1e rm -rf /srv/data`, want: sedEffects{runs: []string{"rm -rf /srv/data"}}},
		{script: `e`, want: sedEffects{runsPattern: true}},
		{script: `s/.*/date/e`, want: sedEffects{runsPattern: true}},
		{script: `s/x/y/ge`, want: sedEffects{runsPattern: true}},
		{script: `w .claude/settings.json`, want: sedEffects{writes: []string{".claude/settings.json"}}},
		{script: `/x/W out.txt`, want: sedEffects{writes: []string{"out.txt"}}},
		{script: `s/a/b/w log.txt`, want: sedEffects{writes: []string{"log.txt"}}},
		{script: `p;w a; p`, want: sedEffects{writes: []string{"a; p"}}}, // a file name runs to the end of its line
		{script: "s/a/b/\nw /dev/stdout\nw x", want: sedEffects{writes: []string{"x"}}},
		{script: `/x/!e id`, want: sedEffects{runs: []string{"id"}}},

		// Unread: the hook cannot say what the script does.
		{script: dynMark, want: sedEffects{unread: "a command is only known at run time"}},
		{script: `s/unclosed`, want: sedEffects{unread: "its s command is not closed"}},
		{script: `k`, want: sedEffects{unread: `sed has no command 'k'`}},
		{script: `/unclosed`, want: sedEffects{unread: "an address is not closed"}},
		{script: `1;p`, want: sedEffects{unread: "an address has no command"}},
		{script: `p;` + dynMark, want: sedEffects{unread: "a command is only known at run time"}},
	} {
		if got := sedScript(c.script); !reflect.DeepEqual(got, c.want) {
			t.Errorf("sedScript(%q) = %+v, want %+v", c.script, got, c.want)
		}
	}
}

// TestSedJudged: what a sed script runs and writes is judged as the same
// command or write would be.
func TestSedJudged(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "e", in: `sed '1e rm -rf /srv/data' f`, want: "destructive"},
		{id: "e-expression", in: `sed -n -e p -e '1e rm -rf /srv/data' f`, want: "destructive"},
		{id: "e-pattern", in: `sed 's/.*/rm -rf x/e' f`, want: "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"},
		{id: "w", in: `sed -n 'w .claude/settings.json' f`, want: "self-mod"},
		{id: "s-w", in: `sed 's/a/b/w ` + home + `/.bashrc' f`, want: "scope-escalation"},
		{id: "sandbox", in: `sed --sandbox -n 'w .claude/settings.json' f`, want: ""},
		{id: "edit", in: `sed -i 's/foo/bar/g' src/x.go`, want: ""},
		{id: "range", in: `sed -n "${START},${END}p" main.go`, want: ""},
		{id: "subst-var", in: `sed -i "s/$OLD/$NEW/g" src/x.go`, want: ""},
		{id: "script-file", in: `sed -f fix.sed src/x.go`, want: ""},
		{id: "stdout", in: `sed -n 'w /dev/stdout' f`, want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// FuzzSedScript: any script is read to an answer without panicking, and
// every command, file and reason it names comes from the script.
func FuzzSedScript(f *testing.F) {
	for _, s := range []string{"s/a/b/g", "1e id", "w x", "s/x/y/w f", "/a/,/b/{p;d}", "y/ab/cd/", "$a\\\nx", "\\,x,d", dynMark + "p", "s\\", "e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := sedScript(s)
		for _, r := range e.runs {
			if !strings.Contains(strings.ReplaceAll(s, "\\", ""), strings.ReplaceAll(r, "\\", "")) && len(r) > 0 && !strings.ContainsRune(s, '\\') {
				t.Fatalf("sedScript(%q) runs %q, not in the script", s, r)
			}
		}
		if len(e.runs)+len(e.writes) > len(s) {
			t.Fatalf("sedScript(%q) found more effects than bytes", s)
		}
	})
}
