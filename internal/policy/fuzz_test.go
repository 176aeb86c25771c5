package policy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzAnalyze checks that no Bash command makes the analyser panic, return
// an error, or take long. Panics are let through (analyze with
// recoverPanics false) so that the fuzzer sees them.
func FuzzAnalyze(f *testing.F) {
	for _, c := range bypassCases {
		if c.tool == "" {
			f.Add(c.in)
		}
	}
	for _, b := range benign[:40] {
		f.Add(b.in)
	}
	for _, s := range []string{
		"", "\x00", "$(", "<(", ">(rm -rf /)", "${", "${x/", "$((1+", "cat <<EOF", "a=(", "case x in", "'", "\"", "`",
		"coproc x { y; }", "function f { g; }; f", "select x in a; do b; done", "[[ -f x ]] && y", "((x++))",
		"let x=1", "declare -a a=(1 2)", "exec {fd}>/tmp/x", "time -p x", "! x | y |& z", "x &>> y", "{ a; } 2>&1 >f",
		// Shapes whose readers read further text: config files and
		// standard input (curl, wget), prompts, mounts, /proc, refspecs.
		"curl -K - x <<< 'request = DELETE'", "curl -K ./c -K - -q x", "wget -e method=DELETE --config=/dev/null x",
		"PS4='$(x)' bash -xc y", "PROMPT_COMMAND='`x`' bash -i", "env 'BASH_FUNC_f%%=() { x; }' bash -c f",
		"docker run -v ~:/h --mount type=bind,source=/,target=/r x", "docker cp c:/x ~/.claude", "kubectl cp a/b:/x .",
		"echo x > /proc/self/cwd/../x", "cat /proc/1/task/2/root/x", "git push o 'refs/*:refs/*'", "git grep -O'x' -e -O y",
		"gh pr create --body \"$(cat <<'E'\nx\nE\n)\"", "echo \"$(pwd -P)\" > \"$(pwd)/.claude/settings.json\"",
		// Text bash expands again: subscripts and prompts, one naming itself.
		"x='a[$(y)]'; echo $((x))", "printf -v 'a[\\$(y)]' z", "x='${x@P}'; echo \"${x@P}\"", "[[ 'a[`y`]' -eq 1 ]]",
		"shopt -s globstar dotglob; rm -rf ~/**/*/**/x", "GLOBIGNORE=.; cat ~/*/y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		in, err := json.Marshal(map[string]string{"command": cmd})
		if err != nil {
			return
		}
		type result struct {
			ms  []Match
			err error
		}
		done := make(chan result, 1)
		go func() {
			ms, err := analyze(Call{Tool: "Bash", Input: in, Cwd: tcwd}, tenv, false)
			done <- result{ms, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(fuzzHangLimit()):
			t.Fatalf("Analyze(%q) still running after %v", cmd, fuzzHangLimit())
		}
		ms, err := r.ms, r.err
		if err != nil {
			t.Fatalf("Analyze(%q) error: %v", cmd, err)
		}
		for _, m := range ms {
			if !knownRule(m.Rule) || m.Rule == Spend || m.Reason == "" || !utf8.ValidString(m.Reason) ||
				strings.ContainsAny(m.Reason, "\n\r\x00") || len(m.Reason) > maxReason+len("…") {
				t.Fatalf("Analyze(%q) returned a bad match %+v", cmd, m)
			}
		}
	})
}

// TestPathologicalInputs guards against hangs on inputs built to be
// expensive: brace bombs, nested unrolled loops, thousands of globs, deep
// nesting. The limit catches a hang, not a slow run (bench for speed): it is
// generous, and more so under the race detector on a loaded machine.
func TestPathologicalInputs(t *testing.T) {
	limit := 20 * time.Second
	if raceBuild {
		limit = 5 * time.Minute
	}
	for _, s := range []string{
		"echo {1..10000000}",
		"rm -rf " + strings.Repeat("{a,b}", 30),
		strings.Repeat("for i in 1 2 3 4 5 6 7 8; do ", 6) + "cat /usr/lib/*" + strings.Repeat("; done", 6),
		strings.Repeat("cat /usr/lib/* /etc/*;", 5000),
		strings.Repeat("$(", 2000) + "x" + strings.Repeat(")", 2000),
		strings.Repeat("bash -c 'eval ", 1) + strings.Repeat("x;", 50000) + "'",
		strings.Repeat("f() { g; }; ", 20000),
		strings.Repeat("a", maxInput+1),
	} {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := analyze(Call{Tool: "Bash", Input: bashInput(t, s), Cwd: tcwd}, tenv, false)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%.40q: error %v", s, err)
			}
			t.Logf("%v for %.40q", time.Since(start), s)
		case <-time.After(limit):
			t.Fatalf("%.40q: still running after %v", s, limit)
		}
	}
}

// fuzzHangLimit is how long one fuzz input may run before it counts as a
// hang (longer under the race detector).
func fuzzHangLimit() time.Duration {
	if raceBuild {
		return 2 * time.Minute
	}
	return 10 * time.Second
}

// FuzzCsplitFormat: any -b text reads without a panic, and a format read
// as one conversion round-trips: its lead and trail, with a digit run
// between, is text the format could print.
func FuzzCsplitFormat(f *testing.F) {
	for _, s := range []string{"%02d", "%.0don", "piece-%03d.log", "%%%d%%", "%d%s", "%", "%x.txt", "%'-08.3X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		form := csplitFormat(word(s))
		if form.anyText {
			return
		}
		if form.alphabet == "" {
			t.Fatalf("csplitFormat(%q) read a conversion with no alphabet", s)
		}
		if strings.Count(s, "%")-2*strings.Count(s, "%%") < 1 {
			t.Fatalf("csplitFormat(%q) read a conversion that is not there: %+v", s, form)
		}
	})
}
