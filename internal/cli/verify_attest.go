package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/verify"
)

// attestationReport is what verify --attestation found.
type attestationReport struct {
	Attestation string `json:"attestation"`
	SHA256      string `json:"sha256"`
	Verified    bool   `json:"verified"`
	// Difference says what failed: the signature, the statement, or (with
	// REF) the commit it names.
	Difference string            `json:"difference,omitempty"`
	Commit     string            `json:"commit,omitempty"`
	Statement  *verify.Statement `json:"statement,omitempty"`
}

// verifyAttestation checks a DSSE envelope against the public key file,
// and with ref that its subject is ref's commit and its claim ref's
// trailers.
func verifyAttestation(ctx context.Context, stdio Stdio, o *verifyOpts, ref string) error {
	if o.pr != 0 || o.repo != "" {
		return usagef("--attestation checks a file; give REF, not --pr")
	}
	ring, err := keys.PublicKeyRing(o.key)
	if err != nil {
		return usagef("--key: %v", err)
	}
	data, err := os.ReadFile(o.attestation)
	if err != nil {
		return usagef("--attestation: %v", err)
	}
	out := attestationReport{Attestation: o.attestation, SHA256: verify.Digest(data)}
	st, err := verify.Open(data, ring)
	switch {
	case errors.Is(err, verify.ErrBadAttestation):
		out.Difference = err.Error()
	case err != nil:
		return err
	default:
		out.Statement, out.Commit = st, st.Commit()
		if ref != "" {
			d, err := attestationMatches(ctx, o.dir, ref, st)
			if err != nil {
				return err
			}
			out.Difference = d
		}
	}
	out.Verified = out.Difference == ""
	if o.json {
		if err := writeJSON(stdio.Stdout, out); err != nil {
			return err
		}
	} else if out.Verified {
		fmt.Fprintf(stdio.Stdout, "verified: %s is signed by %s and attests commit %s (finding %s, %s, %d gate verdict(s))\n",
			o.attestation, o.key, out.Commit, st.Predicate.Claim.Finding, st.Predicate.Terminal, len(st.Predicate.Gates))
	} else {
		fmt.Fprintf(stdio.Stdout, "DIFFERS: %s: %s\n", o.attestation, out.Difference)
	}
	if !out.Verified {
		return errDiffers
	}
	return nil
}

// attestationMatches compares a verified statement with ref in the
// clone: the subject is its commit, the tree its tree, the claim its
// trailers'. It returns the first difference, or "".
func attestationMatches(ctx context.Context, dir, ref string, st *verify.Statement) (string, error) {
	repo, done, err := openClone(ctx, dir)
	if err != nil {
		return "", err
	}
	defer done()
	c, err := repo.ReadCommit(ctx, ref)
	if err != nil {
		return "", &errServiceUnavailable{err}
	}
	return statementDiff(ref, &c, st), nil
}

// statementDiff compares a verified statement with commit c (named ref in
// what it says): the subject is c, the tree c's tree, the claim c's
// trailers'. It returns the first difference, or "".
func statementDiff(ref string, c *gitx.Commit, st *verify.Statement) string {
	if c.SHA != st.Commit() {
		return fmt.Sprintf("the attestation is about commit %s, %s is %s", st.Commit(), ref, c.SHA)
	}
	if c.Tree != st.Predicate.Tree {
		return fmt.Sprintf("the attested tree is %s, the commit's %s", st.Predicate.Tree, c.Tree)
	}
	claim, err := verify.ParseTrailers(c.Message)
	if err != nil {
		return "the commit's trailers: " + err.Error()
	}
	if d := claim.Diff(st.Predicate.Claim); d != "" {
		return "the attested claim differs from the commit's trailers in " + d
	}
	return ""
}
