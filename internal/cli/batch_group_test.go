package cli

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/batch"
	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/verdict"
	"github.com/fixrail/fixrail/internal/verify"
)

const groupYAML = "runner: {kind: command, command: [\"false\"]}\nsuite: {command: [\"true\"]}\npaths: {fixable: [\"requirements.txt\"]}\nsandbox: off\n"

// groupFixture is a repository with a base and two held commits stacked
// on it, as two grouped runs would leave them, and the group that names
// them. tamper edits the second commit's claim and parent before it is
// made.
func groupFixture(t *testing.T, tamper func(c *verify.Claim, parent *string), body2 string) (*groupBatch, *batch.Group, string) {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": groupYAML, "requirements.txt": "a==1\nb==1\n"})
	base := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	branch := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"))
	commit := func(id, parent, content string, claim verify.Claim) string {
		blob, err := gittest.RunInput(t, dir, content, "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := gittest.RunInput(t, dir, "100644 blob "+strings.TrimSpace(blob)+"\trequirements.txt\n"+
			"100644 blob "+strings.TrimSpace(gittest.Git(t, dir, "rev-parse", base+":fixrail.yaml"))+"\tfixrail.yaml\n", "mktree")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(gittest.Git(t, dir, "commit-tree", strings.TrimSpace(tree), "-p", parent, "-m", "fixrail: fix finding "+id+"\n\n"+claim.Trailers()))
	}
	c1 := commit("f1", base, "a==2\nb==1\n", verify.Claim{Finding: "f1", FixType: "cve", Base: base, Files: []string{"requirements.txt"}, Version: "devel"})
	claim2, parent2 := verify.Claim{Finding: "f2", FixType: "cve", Base: c1, Files: []string{"requirements.txt"}, Version: "devel"}, c1
	if tamper != nil {
		tamper(&claim2, &parent2)
	}
	c2 := commit("f2", parent2, "a==2\nb==2\n", claim2)
	bdir := t.TempDir()
	gb := &groupBatch{dir: bdir, local: dir, base: branch}
	for _, h := range []struct{ id, commit, body string }{{"f1", c1, "## Draft fix for finding f1\n"}, {"f2", c2, body2}} {
		data, _ := json.Marshal(heldPR{PR: forge.PR{ID: h.id, Commit: h.commit, Files: []string{"requirements.txt"}, Labels: []string{"fixrail", "fix:cve"}, Draft: true}, Body: h.body})
		if err := os.WriteFile(gb.heldPath(h.id), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ok := batch.Result{Terminal: verdict.DraftPR, Reason: "fixed"}
	g := &batch.Group{Manifest: "requirements.txt", Base: base, Members: []batch.Member{
		{Item: batch.Item{ID: "f1"}, Parent: base, Commit: c1, Result: ok},
		{Item: batch.Item{ID: "f2"}, Parent: c1, Commit: c2, Result: ok},
	}}
	return gb, g, dir
}

// TestPublishGroupChecksTheChain: the group is published only when each
// commit's one parent is the commit it was judged on and its own trailers
// name its own finding and that parent, when its text is clean and its
// branch new; otherwise nothing is published and no branch is made.
func TestPublishGroupChecksTheChain(t *testing.T) {
	secret := "gh" + "p_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for _, tc := range []struct {
		name   string
		tamper func(c *verify.Claim, parent *string)
		body   string
		pre    bool // the group's branch exists already
		want   string
	}{
		{name: "whole chain", want: ""},
		{name: "trailers name another finding", tamper: func(c *verify.Claim, _ *string) { c.Finding = "f1" }, want: "trailers name finding"},
		{name: "trailers name the base, not the parent", tamper: func(c *verify.Claim, _ *string) { c.Base = strings.Repeat("0", 40) }, want: "trailers name finding"},
		{name: "judged off the chain", tamper: func(c *verify.Claim, p *string) { *p = c.Base + "^" }, want: "is not"},
		{name: "a secret in a finding's body", body: "## Draft fix\n\ntoken " + secret + "\n", want: "leak scan"},
		{name: "branch exists", pre: true, want: "exists already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == "" {
				body = "## Draft fix for finding f2\n"
			}
			gb, g, dir := groupFixture(t, tc.tamper, body)
			head := forge.BranchPrefix + g.ID()
			if tc.pre {
				gittest.Git(t, dir, "branch", head, g.Base)
			}
			pub, err := gb.publishGroup(t.Context(), g)
			bundle := filepath.Join(dir, ".fixrail", "outbox", g.ID(), "pr.json")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("publishGroup = %v", err)
				}
				if got := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", head)); got != g.Tip() {
					t.Fatalf("branch at %s, want the tip %s", got, g.Tip())
				}
				if _, err := os.Stat(bundle); err != nil || pub.Location == "" {
					t.Fatalf("no bundle: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("publishGroup = %v, want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(bundle); !os.IsNotExist(err) {
				t.Fatalf("a bundle was written: %v", err)
			}
			out, _ := gittest.Run(t, dir, "rev-parse", "--verify", "-q", head)
			if tc.pre && strings.TrimSpace(out) != g.Base {
				t.Fatalf("the existing branch moved to %s", out)
			}
			if !tc.pre && strings.TrimSpace(out) != "" {
				t.Fatalf("branch %s made: %s", head, out)
			}
		})
	}
}

// TestHeldDraftUnderDryRun: the held publisher writes its draft once, to
// a new file; under --dry-run the dry-run forge wraps it, as run.go
// applies them (runOpts.wrap), and refuses the write.
func TestHeldDraftUnderDryRun(t *testing.T) {
	dir := t.TempDir()
	pr := forge.PR{ID: "f1", Base: "main", Head: "fixrail/f1", Draft: true, Commit: strings.Repeat("a", 40), Files: []string{"x"}, Body: "b"}
	for _, dry := range []bool{false, true} {
		held := filepath.Join(dir, map[bool]string{false: "wet.json", true: "dry.json"}[dry])
		o := &runOpts{g: groupOpts{holdPR: held}, x: runMoreOpts{dryRun: dry}}
		p := pipeline.Params{Forge: &forge.Local{Dir: filepath.Join(dir, "outbox")}}
		o.wrap(&p, nil)
		_, err := p.Forge.Publish(t.Context(), pr)
		_, statErr := os.Stat(held)
		if dry != (err != nil) || dry != os.IsNotExist(statErr) {
			t.Fatalf("dry run %v: Publish = %v, held file: %v", dry, err, statErr)
		}
		if !dry {
			h, err := readHeld(held)
			if err != nil || h.Body != "b" || h.PR.Commit != pr.Commit {
				t.Fatalf("held = %+v, %v", h, err)
			}
			if _, err := p.Forge.Publish(t.Context(), pr); err == nil {
				t.Fatal("a second held write replaced the first")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "outbox")); !os.IsNotExist(err) {
		t.Fatalf("the outbox was written: %v", err)
	}
}

// TestGroupAttestations: with --attest-key, each finding's attestation,
// signed by the run that judged it and held beside its draft, goes beside
// the group's draft once it checks — signed by the batch's key, about the
// commit the group holds for that finding, with its tree and trailers.
// One that does not check, or is missing, is left out and named; the
// group is published either way, as a single run's draft stands when its
// attestation fails.
func TestGroupAttestations(t *testing.T) {
	newKey := func() *keys.Key {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return keys.NewEd25519Key(priv)
	}
	key, other := newKey(), newKey()
	// signed is the attestation a run would hold for commit sha in dir,
	// signed by k; edit changes the statement before it is signed.
	signed := func(t *testing.T, dir, id, sha string, k *keys.Key, edit func(*verify.Statement)) []byte {
		t.Helper()
		claim, err := verify.ParseTrailers(gittest.Git(t, dir, "log", "-1", "--format=%B", sha))
		if err != nil {
			t.Fatal(err)
		}
		tree := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", sha+"^{tree}"))
		st := verify.NewStatement(sha, verify.Predicate{Claim: claim, Tree: tree, Branch: forge.BranchPrefix + id,
			RunID: "20261206-050000-0a0b0c0d", Terminal: string(pipeline.DraftPR), Reason: "fixed", Gates: []verify.GateVerdict{}})
		if edit != nil {
			edit(&st)
		}
		data, err := verify.Sign(k, st)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, tc := range []struct {
		name   string
		noKey  bool                                                  // the batch was given no key
		second func(t *testing.T, dir string, g *batch.Group) []byte // f2's held attestation; nil: none
		want   string                                                // f2's warning; "" for none (and its file placed)
	}{
		{name: "both check", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f2", g.Members[1].Commit, key, nil)
		}},
		{name: "another key", want: "keyid", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f2", g.Members[1].Commit, other, nil)
		}},
		{name: "about the other commit", want: "is about commit", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f1", g.Members[0].Commit, key, nil)
		}},
		{name: "another tree", want: "attested tree", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f2", g.Members[1].Commit, key, func(st *verify.Statement) { st.Predicate.Tree = strings.Repeat("e", 40) })
		}},
		{name: "another claim", want: "claim differs", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f2", g.Members[1].Commit, key, func(st *verify.Statement) { st.Predicate.Claim.Finding = "f9" })
		}},
		{name: "a changed byte", want: "does not verify", second: func(t *testing.T, dir string, g *batch.Group) []byte {
			data := signed(t, dir, "f2", g.Members[1].Commit, key, nil)
			return append([]byte{' '}, data...)
		}},
		{name: "none held", want: "none was held"},
		{name: "no key", noKey: true, second: func(t *testing.T, dir string, g *batch.Group) []byte {
			return signed(t, dir, "f2", g.Members[1].Commit, key, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gb, g, dir := groupFixture(t, nil, "## Draft fix for finding f2\n")
			for _, m := range g.Members { // as each run left them
				gittest.Git(t, dir, "branch", forge.BranchPrefix+m.Item.ID, m.Commit)
			}
			if !tc.noKey {
				gb.key = key
			}
			held := map[string][]byte{"f1": signed(t, dir, "f1", g.Members[0].Commit, key, nil)}
			if tc.second != nil {
				held["f2"] = tc.second(t, dir, g)
			}
			for id, data := range held {
				if err := os.WriteFile(heldAttestationPath(gb.heldPath(id)), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			pub, err := gb.publishGroup(t.Context(), g)
			if err != nil {
				t.Fatalf("publishGroup = %v; an attestation never stops the group", err)
			}
			ring := &keys.Keyring{}
			if err := ring.Add(key.PublicKey(), "k"); err != nil {
				t.Fatal(err)
			}
			for i, id := range []string{"f1", "f2"} {
				placed, err := os.ReadFile(filepath.Join(pub.Location, groupAttestationFile(id)))
				wantPlaced := !tc.noKey && (id == "f1" || tc.want == "")
				if !wantPlaced {
					if err == nil {
						t.Fatalf("%s: an attestation was placed", id)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if !bytes.Equal(placed, held[id]) {
					t.Fatalf("%s: the placed attestation is not the one its run signed", id)
				}
				st, err := verify.Open(placed, ring)
				if err != nil || st.Commit() != g.Members[i].Commit {
					t.Fatalf("%s: placed attestation: %v", id, err)
				}
			}
			warn := strings.Join(pub.Warnings, "\n")
			switch {
			case tc.want == "" && warn != "":
				t.Fatalf("warnings: %s", warn)
			case tc.want != "" && (!strings.Contains(warn, "finding f2: no attestation beside the group's draft") || !strings.Contains(warn, tc.want)):
				t.Fatalf("warnings %q, want f2 named with %q", warn, tc.want)
			case strings.Contains(warn, "finding f1"):
				t.Fatalf("f1 named: %s", warn)
			}
		})
	}
}

// recordSink is a webhook that keeps what it is sent.
type recordSink struct{ got []events.Event }

func (r *recordSink) Send(e events.Event) { r.got = append(r.got, e) }

// TestGroupEvent: a grouping batch tells the webhook whether each group's
// draft was published — where, and which findings it holds — or why not;
// each field passes the redaction first (a manifest's name comes from the
// findings).
func TestGroupEvent(t *testing.T) {
	secret := "gh" + "p_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	scrub, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		manifest string
		tamper   func(c *verify.Claim, parent *string)
		verdict  string
		detail   string // a substring of the event's detail
	}{
		{name: "published", manifest: "requirements.txt", verdict: "published", detail: filepath.Join(".fixrail", "outbox", "group-")},
		{name: "not published", manifest: "requirements.txt", tamper: func(c *verify.Claim, _ *string) { c.Finding = "f1" }, verdict: "not-published", detail: "trailers name finding"},
		{name: "a secret in the manifest's name", manifest: "requirements-" + secret + ".txt", verdict: "not-published", detail: "leak scan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gb, g, _ := groupFixture(t, tc.tamper, "## Draft fix for finding f2\n")
			g.Manifest = tc.manifest
			sink := &recordSink{}
			gb.sink, gb.scrub, gb.now = sink, scrub, func() time.Time { return time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC) }
			results := []batch.Result{{Item: batch.Item{ID: "f1"}}, {Item: batch.Item{ID: "f2"}}}
			gb.publishOne(t.Context(), io.Discard, g, results)
			if len(sink.got) != 1 {
				t.Fatalf("%d events, want 1", len(sink.got))
			}
			e := sink.got[0]
			// The group's id is made from the manifest's name: redacted
			// with it when that holds a secret.
			wantID := g.ID()
			if strings.Contains(tc.manifest, secret) {
				wantID = "[REDACTED:high-entropy]"
			}
			if e.Type != events.TypeGroup || e.Run != wantID || e.Name != wantID || e.Verdict != tc.verdict || !strings.Contains(e.Detail, tc.detail) {
				t.Fatalf("event %+v, want %s with %q", e, tc.verdict, tc.detail)
			}
			if !strings.Contains(e.Reason, "2 of 2 finding(s) on ") || !strings.HasSuffix(e.Reason, ": f1, f2") {
				t.Fatalf("reason %q", e.Reason)
			}
			if b, _ := json.Marshal(e); strings.Contains(string(b), secret) {
				t.Fatalf("the event holds the secret: %s", b)
			}
		})
	}
}
