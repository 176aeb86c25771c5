package policy

import (
	stdcmp "cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultModes(t *testing.T) {
	want := map[Rule]Mode{
		SelfMod: Gate, PushForce: Warn, PushProtected: Warn, Publish: Warn,
		EgressOther: Warn, Destructive: Warn, ScopeEscalation: Warn, Spend: Off,
		Discard: Warn, Teardown: Warn, DataDrop: Warn, BranchDelete: Warn, HistoryPrune: Warn,
	}
	if diff := cmp.Diff(want, DefaultModes()); diff != "" {
		t.Errorf("DefaultModes() (-want +got):\n%s", diff)
	}
	if len(Rules) != len(want) {
		t.Errorf("Rules has %d entries, want %d", len(Rules), len(want))
	}
	// DefaultModes returns a fresh map each time.
	m := DefaultModes()
	m[SelfMod] = Off
	if DefaultModes()[SelfMod] != Gate {
		t.Error("DefaultModes shares its map")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	merged := DefaultModes()
	merged[PushForce] = Gate
	merged[SelfMod] = Warn
	merged[Spend] = Warn
	for _, c := range []struct {
		name     string
		path     string
		want     map[Rule]Mode
		wantSync string // SyncFlagged when empty
		wantErr  string
	}{
		{name: "missing file", path: filepath.Join(dir, "nope.json"), want: DefaultModes()},
		{name: "empty object", path: file("empty.json", `{}`), want: DefaultModes()},
		{name: "null modes", path: file("null.json", `{"modes": null}`), want: DefaultModes()},
		{name: "partial", path: file("partial.json", `{"modes": {"push-force": "gate", "self-mod": "warn", "spend": "warn"}}`), want: merged},
		{name: "unknown rule", path: file("rule.json", `{"modes": {"push-forse": "gate"}}`), wantErr: `unknown rule "push-forse"`},
		{name: "unknown mode", path: file("mode.json", `{"modes": {"publish": "block"}}`), wantErr: `unknown mode "block" for rule "publish"`},
		{name: "mode case", path: file("case.json", `{"modes": {"publish": "Gate"}}`), wantErr: `unknown mode "Gate"`},
		{name: "unknown field", path: file("field.json", `{"mode": {"publish": "gate"}}`), wantErr: `unknown field "mode"`},
		{name: "trailing data", path: file("trail.json", `{"modes": {}} {}`), wantErr: "trailing data"},
		{name: "not json", path: file("bad.json", `modes: gate`), wantErr: "parse policy"},
		{name: "wrong type", path: file("type.json", `{"modes": {"publish": 1}}`), wantErr: "parse policy"},
		{name: "directory", path: dir, wantErr: "load policy"},
		{name: "receipts sync all", path: file("sync.json", `{"receipts": {"sync": "all"}}`), want: DefaultModes(), wantSync: SyncAll},
		{name: "receipts sync flagged", path: file("flagged.json", `{"modes": {}, "receipts": {"sync": "flagged"}}`), want: DefaultModes()},
		{name: "receipts empty", path: file("rempty.json", `{"receipts": {}}`), want: DefaultModes()},
		{name: "receipts sync unknown", path: file("syncx.json", `{"receipts": {"sync": "always"}}`), wantErr: `unknown receipts sync "always"`},
		{name: "receipts unknown field", path: file("rfield.json", `{"receipts": {"fsync": "all"}}`), wantErr: `unknown field "fsync"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Load(c.path)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Load() error = %v, want one containing %q", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.path) {
					t.Errorf("Load() error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if diff := cmp.Diff(c.want, p.Modes); diff != "" {
				t.Errorf("Load() modes (-want +got):\n%s", diff)
			}
			if want := stdcmp.Or(c.wantSync, SyncFlagged); p.ReceiptSync != want {
				t.Errorf("Load() receipt sync = %q, want %q", p.ReceiptSync, want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	force := Match{Rule: PushForce, Reason: "git push -f"}
	self := Match{Rule: SelfMod, Reason: "writes settings"}
	selfQ := Match{Rule: SelfMod, Reason: "write target unknown", Unresolvable: true}
	spend := Match{Rule: Spend, Reason: "x"}
	destQ := Match{Rule: Destructive, Reason: "target unknown", Unresolvable: true}
	offForce := Default()
	offForce.Modes[PushForce] = Off
	gateDest := Default()
	gateDest.Modes[Destructive] = Gate
	for _, c := range []struct {
		name string
		p    *Policy
		in   []Match
		want Decision
	}{
		{name: "nothing", p: Default(), want: Decision{Verdict: VerdictAllow}},
		{name: "warn", p: Default(), in: []Match{force}, want: Decision{Verdict: VerdictWarn, Matches: []Match{force}}},
		{name: "gate", p: Default(), in: []Match{force, self}, want: Decision{Verdict: VerdictDeny, Matches: []Match{force, self}, Gated: []Match{self}}},
		{name: "unresolvable gates", p: Default(), in: []Match{selfQ}, want: Decision{Verdict: VerdictDeny, Matches: []Match{selfQ}, Gated: []Match{selfQ}}},
		{name: "unresolvable warns", p: Default(), in: []Match{destQ}, want: Decision{Verdict: VerdictWarn, Matches: []Match{destQ}}},
		{name: "unresolvable in gate mode", p: gateDest, in: []Match{destQ}, want: Decision{Verdict: VerdictDeny, Matches: []Match{destQ}, Gated: []Match{destQ}}},
		{name: "off drops", p: offForce, in: []Match{force}, want: Decision{Verdict: VerdictAllow}},
		{name: "spend off by default", p: Default(), in: []Match{spend}, want: Decision{Verdict: VerdictAllow}},
		{name: "nil policy uses defaults", p: nil, in: []Match{self}, want: Decision{Verdict: VerdictDeny, Matches: []Match{self}, Gated: []Match{self}}},
		{name: "empty modes use defaults", p: &Policy{}, in: []Match{force}, want: Decision{Verdict: VerdictWarn, Matches: []Match{force}}},
		{name: "unknown rule gates", p: Default(), in: []Match{{Rule: "new-rule"}}, want: Decision{Verdict: VerdictDeny, Matches: []Match{{Rule: "new-rule"}}, Gated: []Match{{Rule: "new-rule"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, c.p.Decide(c.in)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndToEnd runs Analyze and Decide together under the default policy.
func TestEndToEnd(t *testing.T) {
	for _, c := range []struct {
		tool, in, verdict string
	}{
		{"Bash", `git push --force origin feat`, VerdictWarn},
		{"Bash", `echo {} > ~/.claude/settings.json`, VerdictDeny},
		{"Bash", `$CMD`, VerdictDeny},
		{"Bash", `if then fi (`, VerdictDeny},
		{"Bash", `go test ./...`, VerdictAllow},
		{"Write", `{"file_path":"/home/u/.config/fixrail/policy.json","content":"{}"}`, VerdictDeny},
		{"Write", `{"file_path":"/home/u/repo/main.go","content":""}`, VerdictAllow},
	} {
		in := json.RawMessage(c.in)
		if c.tool == "Bash" {
			in = bashInput(t, c.in)
		}
		ms, err := Analyze(Call{Tool: c.tool, Input: in, Cwd: tcwd}, tenv)
		if err != nil {
			t.Fatalf("Analyze(%q) error = %v", c.in, err)
		}
		if got := Default().Decide(ms).Verdict; got != c.verdict {
			t.Errorf("%s %q: verdict %s, want %s (matches %v)", c.tool, c.in, got, c.verdict, ms)
		}
	}
}

// An unparseable command is unresolvable for every rule but spend, with a
// reason that says so.
func TestUnparseable(t *testing.T) {
	ms, err := Analyze(Call{Tool: "Bash", Input: bashInput(t, `echo "unterminated`), Cwd: tcwd}, tenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(ms); got != allQ {
		t.Errorf("summary = %q, want %q", got, allQ)
	}
	for _, m := range ms {
		if !strings.Contains(m.Reason, "does not parse") {
			t.Errorf("reason %q does not say the command does not parse", m.Reason)
		}
	}
}

func TestLoopbackURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://localhost:8080/x", true},
		{"localhost/x", true},
		{"http://api.localhost/", true},
		{"http://127.0.0.1:3000", true},
		{"127.1.2.3", true},
		{"http://[::1]:9000/", true},
		{"http://[::ffff:127.0.0.1]/", true},
		{"http://0.0.0.0:8000", true},
		{"http://[::]/", true},
		{"http://user@127.0.0.1:8080/", true},
		{":3000/path", true},
		{"http://localhost.example.com/", false},
		{"http://127.0.0.1.nip.io/", false},
		{"https://example.com/", false},
		{"http://10.0.0.1/", false},
		{"http://[::ffff:10.0.0.1]/", false},
		{"http://0x7f000001/", false}, // curl would resolve it; taken as another host, the safe side
		{"http://%zz/", false},
	} {
		if got := loopbackURL(tc.url); got != tc.want {
			t.Errorf("loopbackURL(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}
