package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/redact"
	"github.com/fixrail/fixrail/internal/verify"
)

// AttestationFile is the attestation's name beside the local forge's
// bundle (.fixrail/outbox/<id>/).
const AttestationFile = "attestation.dsse.json"

// attestKey loads the key a run signs its attestation with: --attest-key,
// else $FIXRAIL_ATTEST_KEY, else none. It is read before the run starts,
// so a key that will not load stops nothing half-way.
func attestKey(flagValue string, lookup func(string) (string, bool)) (*keys.Key, error) {
	path := flagValue
	if path == "" {
		path, _ = lookup("FIXRAIL_ATTEST_KEY")
	}
	if path == "" {
		return nil, nil
	}
	k, err := sshkey.Load(path)
	if err != nil {
		return nil, usagef("--attest-key: %v", err)
	}
	return k, nil
}

// attest signs what a DRAFT-PR run judged — the commit, its trailers'
// claim, every gate's verdict — and puts the envelope beside the bundle
// (the local forge) or on the PR as a comment (GitHub). The PR exists
// already: a failure here is said on stderr and in the exit code's
// stead never; `fixrail verify --attestation` fails closed on a missing
// or broken one.
func attest(ctx context.Context, key *keys.Key, s *pipeline.Setup, f pipeline.Forge, rep *pipeline.Report, stderr io.Writer) {
	if key == nil || rep.Terminal != pipeline.DraftPR || rep.Commit == "" {
		return
	}
	err := func() error {
		st, err := draftStatement(ctx, s, rep)
		if err != nil {
			return err
		}
		return sendAttestation(ctx, key, s.Scrub, f, rep, st, stderr)
	}()
	if err != nil {
		fmt.Fprintf(stderr, "fixrail run: attestation: %v (the draft PR stands; it carries no attestation)\n", err)
	}
}

// attestHeld signs a held draft's attestation as attest signs a published
// one, and writes it beside the held draft (heldAttestationPath), where
// the grouping batch checks it and puts it beside the group's PR. A
// failure is said on stderr; the draft is held without one.
func attestHeld(ctx context.Context, key *keys.Key, s *pipeline.Setup, rep *pipeline.Report, held string, stderr io.Writer) {
	if key == nil || rep.Terminal != pipeline.DraftPR || rep.Commit == "" {
		return
	}
	path := heldAttestationPath(held)
	err := func() error {
		st, err := draftStatement(ctx, s, rep)
		if err != nil {
			return err
		}
		data, err := signAttestation(key, s.Scrub, st)
		if err != nil {
			return err
		}
		return pathguard.WriteNew(path, data, 0o600)
	}()
	if err != nil {
		fmt.Fprintf(stderr, "fixrail run: attestation: %v (the draft is held without one)\n", err)
		return
	}
	fmt.Fprintf(stderr, "attestation: %s, for the grouped PR\n", path)
}

// draftStatement is what a DRAFT-PR run attests: its commit as read from
// the repository, that commit's trailers' claim, and every gate's verdict.
func draftStatement(ctx context.Context, s *pipeline.Setup, rep *pipeline.Report) (verify.Statement, error) {
	c, err := s.Repo.ReadCommit(ctx, rep.Commit)
	if err != nil {
		return verify.Statement{}, err
	}
	claim, err := verify.ParseTrailers(c.Message)
	if err != nil {
		return verify.Statement{}, err
	}
	p := verify.Predicate{Claim: claim, Tree: c.Tree, Branch: rep.Branch, RunID: rep.RunID, Terminal: string(rep.Terminal), Reason: rep.Reason, Gates: []verify.GateVerdict{}}
	for _, g := range rep.Gates {
		p.Gates = append(p.Gates, verify.GateVerdict{Phase: g.Phase, Name: g.Name, Verdict: g.Verdict, Detail: g.Detail})
	}
	return verify.NewStatement(c.SHA, p), nil
}

// signAttestation leak-scans st and signs it. What an attestation holds
// leaves like every text a run sends, through the leak scan first — the
// statement as signed too, since the envelope carries it base64-encoded,
// where neither a reader nor the forge's own secret scanning would see a
// credential. The gate details were redacted with the report; a blocking
// finding here means something escaped that, and nothing is signed (fail
// closed: the draft stands without an attestation, and says so on
// stderr).
func signAttestation(key *keys.Key, scrub *redact.Engine, st verify.Statement) ([]byte, error) {
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	// Scanned as signed, and as a reader who decodes it sees each value:
	// JSON escapes (\u0026 for &, \" for a quote) could break a
	// credential's shape in the first form.
	values, err := jsonStrings(payload)
	if err != nil {
		return nil, err
	}
	if err := attestLeakFree(scrub, "statement", string(payload)+"\n"+values); err != nil {
		return nil, err
	}
	return verify.Sign(key, st)
}

// sendAttestation signs st (signAttestation) and puts the envelope beside
// the bundle (the local forge) or on the PR as a comment, which is
// leak-scanned again as the text it is.
func sendAttestation(ctx context.Context, key *keys.Key, scrub *redact.Engine, f pipeline.Forge, rep *pipeline.Report, st verify.Statement, stderr io.Writer) error {
	data, err := signAttestation(key, scrub, st)
	if err != nil {
		return err
	}
	if _, ok := f.(*forge.Local); ok {
		path := filepath.Join(rep.PR, AttestationFile)
		if err := pathguard.WriteNew(path, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "attestation: %s (sha256 %s)\n", path, verify.Digest(data))
		return nil
	}
	n, err := prNumber(rep.PR)
	if err != nil {
		return err
	}
	body := "### fixrail attestation\n\nAn in-toto statement in a DSSE envelope, signed by the operator's key: commit `" + st.Commit() + "`, its trailers' claim and every gate's verdict. Save the block below to a file and check it with `fixrail verify --attestation FILE --key KEY.pub " + st.Commit() + "`.\n\n```json\n" + strings.TrimSpace(string(data)) + "\n```\n"
	if err := attestLeakFree(scrub, "comment", body); err != nil {
		return err
	}
	if err := f.Notify(ctx, forge.Notice{ID: st.Predicate.Claim.Finding, Terminal: forge.Terminal(rep.Terminal), Reason: rep.Reason, Number: n, Body: body}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "attestation: commented on %s (sha256 %s)\n", rep.PR, verify.Digest(data))
	return nil
}

// attestLeakFree fails on any blocking finding in the attestation's text,
// naming the rule, never the value. Without a scan engine nothing is sent.
func attestLeakFree(scrub *redact.Engine, what, text string) error {
	if scrub == nil {
		return fmt.Errorf("leak scan of the attestation %s: no scan engine", what)
	}
	fs, err := scrub.Detect(text)
	if err != nil {
		return fmt.Errorf("leak scan of the attestation %s: %w", what, err)
	}
	for _, f := range fs {
		if f.Blocking() {
			return fmt.Errorf("leak scan: the attestation %s holds %s; withheld", what, f.Rule)
		}
	}
	return nil
}

// jsonStrings returns every string in a JSON document, keys and values,
// one per line.
func jsonStrings(doc []byte) (string, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				b.WriteString(k)
				b.WriteByte('\n')
				walk(e)
			}
		}
	}
	walk(v)
	return b.String(), nil
}

// prNumber is the number at the end of a PR's address (…/pull/N).
func prNumber(url string) (int, error) {
	i := strings.LastIndex(url, "/pull/")
	if i < 0 {
		return 0, fmt.Errorf("no PR number in %q", url)
	}
	return strconv.Atoi(url[i+len("/pull/"):])
}
