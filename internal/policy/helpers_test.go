package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// The tests run against a machine that does not exist: nothing under
// /home/u is on disk, so symlink resolution leaves those paths alone.
var tenv = Env{
	Home:            "/home/u",
	FixrailHome:     "/home/u/.config/fixrail",
	FixrailBinaries: []string{"/usr/local/bin/fixrail"},
	TmpDir:          "/var/folders/t/T",
}

const tcwd = "/home/u/repo"

// allQ is the summary of a call that is unresolvable for every rule.
const allQ = "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"

// summary renders matches as the rules they hit, in Rules order: "rule"
// for a concrete match, "rule?" when the rule is only unresolvable.
func summary(ms []Match) string {
	concrete := map[Rule]bool{}
	unres := map[Rule]bool{}
	for _, m := range ms {
		if m.Unresolvable {
			unres[m.Rule] = true
		} else {
			concrete[m.Rule] = true
		}
	}
	var out []string
	for _, r := range Rules {
		switch {
		case concrete[r]:
			out = append(out, string(r))
		case unres[r]:
			out = append(out, string(r)+"?")
		}
	}
	return strings.Join(out, " ")
}

func bashInput(t testing.TB, cmd string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": cmd})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tc is one table case: a Bash command (in) unless tool is set, in which
// case in is the tool's JSON input.
type tc struct {
	id, in, want string
	tool         string
	cwd          string
}

func runCase(t *testing.T, c tc, env Env) {
	t.Helper()
	call := Call{Tool: "Bash", Cwd: tcwd}
	if c.cwd != "" {
		call.Cwd = c.cwd
	}
	if c.tool != "" {
		call.Tool = c.tool
		call.Input = json.RawMessage(c.in)
	} else {
		call.Input = bashInput(t, c.in)
	}
	ms, err := analyze(call, env, false)
	if err != nil {
		t.Fatalf("%s: Analyze(%s %q) error: %v", c.id, call.Tool, c.in, err)
	}
	if got := summary(ms); got != c.want {
		var reasons []string
		for _, m := range ms {
			reasons = append(reasons, "\n\t\t"+string(m.Rule)+map[bool]string{true: "?", false: ""}[m.Unresolvable]+": "+m.Reason)
		}
		t.Errorf("%s: %s %q\n\tgot  %q\n\twant %q%s", c.id, call.Tool, c.in, got, c.want, strings.Join(reasons, ""))
	}
}
