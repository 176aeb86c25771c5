package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/verify"
)

// AttestationFile is the attestation's name beside the local forge's
// bundle (.fixrail/outbox/<id>/).
const AttestationFile = "attestation.dsse.json"

// attestKey loads the key a run signs its attestation with: --attest-key,
// else $FIXRAIL_ATTEST_KEY, else none. It is read before the run starts,
// so a key that will not load stops nothing half-way.
func attestKey(flagValue string, lookup func(string) (string, bool)) (*approval.Key, error) {
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
func attest(ctx context.Context, key *approval.Key, s *pipeline.Setup, f pipeline.Forge, rep *pipeline.Report, stderr io.Writer) {
	if key == nil || rep.Terminal != pipeline.DraftPR || rep.Commit == "" {
		return
	}
	if err := attestDraft(ctx, key, s, f, rep, stderr); err != nil {
		fmt.Fprintf(stderr, "fixrail run: attestation: %v (the draft PR stands; it carries no attestation)\n", err)
	}
}

func attestDraft(ctx context.Context, key *approval.Key, s *pipeline.Setup, f pipeline.Forge, rep *pipeline.Report, stderr io.Writer) error {
	c, err := s.Repo.ReadCommit(ctx, rep.Commit)
	if err != nil {
		return err
	}
	claim, err := verify.ParseTrailers(c.Message)
	if err != nil {
		return err
	}
	p := verify.Predicate{Claim: claim, Tree: c.Tree, Branch: rep.Branch, RunID: rep.RunID, Terminal: string(rep.Terminal), Reason: rep.Reason, Gates: []verify.GateVerdict{}}
	for _, g := range rep.Gates {
		p.Gates = append(p.Gates, verify.GateVerdict{Phase: g.Phase, Name: g.Name, Verdict: g.Verdict, Detail: g.Detail})
	}
	data, err := verify.Sign(key, verify.NewStatement(c.SHA, p))
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
	body := "### fixrail attestation\n\nAn in-toto statement in a DSSE envelope, signed by the operator's key: commit `" + c.SHA + "`, its trailers' claim and every gate's verdict. Save the block below to a file and check it with `fixrail verify --attestation FILE --key KEY.pub " + c.SHA + "`.\n\n```json\n" + strings.TrimSpace(string(data)) + "\n```\n"
	if err := f.Notify(ctx, forge.Notice{ID: claim.Finding, Terminal: forge.Terminal(rep.Terminal), Reason: rep.Reason, Number: n, Body: body}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "attestation: commented on %s (sha256 %s)\n", rep.PR, verify.Digest(data))
	return nil
}

// prNumber is the number at the end of a PR's address (…/pull/N).
func prNumber(url string) (int, error) {
	i := strings.LastIndex(url, "/pull/")
	if i < 0 {
		return 0, fmt.Errorf("no PR number in %q", url)
	}
	return strconv.Atoi(url[i+len("/pull/"):])
}
