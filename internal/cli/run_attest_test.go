package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/verify"
)

// TestSendAttestationLeakScan: the attestation leaves through the leak scan
// like every text a run sends. The statement travels base64-encoded in the
// envelope, so a credential in a gate's detail would be invisible to a
// reader and to the forge's own scanning; the scan reads the statement as
// signed, and on a blocking finding nothing is commented or written.
func TestSendAttestationLeakScan(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key := keys.NewEd25519Key(priv)
	scrub, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A GitHub token shape, assembled so that no literal here looks like one.
	token := "gh" + "p_" + strings.Repeat("aB3dE6gH9k", 4)[:36]
	statement := func(detail string) verify.Statement {
		return verify.NewStatement(strings.Repeat("c", 40), verify.Predicate{
			Claim: verify.Claim{Finding: "gh-42", FixType: "bug", Base: strings.Repeat("b", 40)},
			Tree:  strings.Repeat("d", 40), Branch: "fixrail/gh-42", RunID: "20261206-040000-0a0b0c0d",
			Terminal: string(pipeline.DraftPR), Reason: "fixed",
			Gates: []verify.GateVerdict{{Phase: "P4", Name: "suite", Verdict: "pass", Detail: detail}},
		})
	}
	ghReport := &pipeline.Report{Terminal: pipeline.DraftPR, Reason: "fixed", PR: "https://github.com/o/r/pull/43"}

	for _, tc := range []struct {
		name    string
		detail  string
		scrub   *redact.Engine
		notify  bool   // the comment is expected
		wantErr string // "" for none
	}{
		{name: "clean", detail: "42 tests passed", scrub: scrub, notify: true},
		{name: "token in a gate detail", detail: "output: export GH_TOKEN=" + token, scrub: scrub, wantErr: "leak scan: the attestation statement holds github-pat"},
		// JSON escapes the quotes and the ampersand in the statement as
		// signed; the value a reader decodes is a credential assignment.
		{name: "assignment broken by JSON escapes", detail: `config: DB_PASSWORD="k9&Qz2<Lm7#Rv"`, scrub: scrub, wantErr: "leak scan: the attestation statement holds credential-assignment"},
		{name: "no scan engine", detail: "42 tests passed", scrub: nil, wantErr: "no scan engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := forgetest.New(t)
			var sent forge.Notice
			if tc.notify {
				f.ExpectNotify(func(n forge.Notice) error { sent = n; return nil })
			}
			var stderr bytes.Buffer
			err := sendAttestation(context.Background(), key, tc.scrub, f, ghReport, statement(tc.detail), &stderr)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("sendAttestation: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("sendAttestation: %v; want an error containing %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error quotes the credential: %v", err)
			}
			if tc.notify && (sent.Number != 43 || !strings.Contains(sent.Body, "### fixrail attestation")) {
				t.Errorf("comment %+v; want the attestation on PR 43", sent)
			}
			if !tc.notify && len(f.Calls()) > 0 {
				t.Errorf("forge calls %+v; want none", f.Calls())
			}
		})
	}

	// The local forge writes the envelope beside the bundle: withheld too.
	t.Run("local forge", func(t *testing.T) {
		dir := t.TempDir()
		rep := &pipeline.Report{Terminal: pipeline.DraftPR, Reason: "fixed", PR: dir}
		var stderr bytes.Buffer
		err := sendAttestation(context.Background(), key, scrub, &forge.Local{Dir: dir}, rep, statement("token "+token), &stderr)
		if err == nil || !strings.Contains(err.Error(), "github-pat") {
			t.Fatalf("sendAttestation: %v; want the leak scan's refusal", err)
		}
		if _, err := os.Stat(filepath.Join(dir, AttestationFile)); !os.IsNotExist(err) {
			t.Errorf("%s written (stat: %v); want nothing", AttestationFile, err)
		}
		if err := sendAttestation(context.Background(), key, scrub, &forge.Local{Dir: dir}, rep, statement("42 tests passed"), &stderr); err != nil {
			t.Fatalf("clean statement: %v", err)
		}
		data, err := os.ReadFile(filepath.Join(dir, AttestationFile))
		if err != nil {
			t.Fatal(err)
		}
		// What the scan read is what the envelope carries.
		var env verify.Envelope
		if err := json.Unmarshal(data, &env); err != nil {
			t.Fatal(err)
		}
		payload, err := base64.StdEncoding.DecodeString(env.Payload)
		if err != nil || !bytes.Contains(payload, []byte(`"detail":"42 tests passed"`)) {
			t.Errorf("envelope payload %q (%v); want the signed statement", payload, err)
		}
	})
}
