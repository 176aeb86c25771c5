package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/keys"
	"github.com/fixrail/fixrail/internal/cli/hookcmd"
)

// `fixrail hook verify-approval` is the slim hook's verifier: fixrail-hook
// links no signature code, so when it claims an approval token for a gated
// call it runs this (hookcmd.ExecVerifier) and lets the call run only on
// the answer hookcmd.VerifiedLine. It reads one token and checks it against
// a keyring; it writes nothing, spends nothing and deletes nothing — the
// hook that asked does.

const verifyApprovalHelp = `Usage: fixrail hook verify-approval --keys DIR [--at TIME] < TOKEN

Checks one approval token (the JSON of $FIXRAIL_HOME/approvals/tokens/*.json)
against the approvers' keys in DIR ($FIXRAIL_HOME/keys) at TIME (RFC 3339,
default now):
signed by a key in DIR in the fixrail-approval namespace, over exactly the
request's canonical form, not expired at TIME. fixrail-hook, which links no
signature code, runs it when a gated call has an approval waiting. It prints
"verified <request sha256>" and exits 0, or says why not and exits 5 (a
malformed token too); 2 for bad flags. It changes no file.
`

// maxTokenInput bounds the token read: a request holds the tool's input,
// which the hook takes up to 16 MiB of.
const maxTokenInput = 32 << 20

func runHookVerifyApproval(stdio Stdio, args []string) error {
	fs := flag.NewFlagSet("hook verify-approval", flag.ContinueOnError)
	dir := fs.String("keys", "", "the approvers' keys `dir` ($FIXRAIL_HOME/keys)")
	at := fs.String("at", "", "the `time` (RFC 3339) the approval must be valid at (default now)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), verifyApprovalHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *dir == "" {
		return usagef("verify-approval needs --keys")
	}
	now := time.Now()
	if *at != "" {
		var err error
		if now, err = time.Parse(time.RFC3339Nano, *at); err != nil {
			return usagef("--at: %v", err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(stdio.Stdin, maxTokenInput+1))
	if err != nil {
		return fmt.Errorf("read the token: %w", err)
	}
	if len(data) > maxTokenInput {
		return &codedError{msg: fmt.Sprintf("the token is over %d bytes", maxTokenInput), code: exitFound}
	}
	var tok approval.Token
	if err := json.Unmarshal(data, &tok); err != nil {
		return &codedError{msg: err.Error(), code: exitFound}
	}
	ring, err := keys.LoadKeyring(*dir)
	if err != nil {
		return &codedError{msg: "the approvers' keys cannot be read: " + err.Error(), code: exitFound}
	}
	if err := ring.Verify(&tok, now); err != nil {
		return &codedError{msg: err.Error(), code: exitFound}
	}
	_, err = io.WriteString(stdio.Stdout, hookcmd.VerifiedLine(&tok))
	return err
}

// keyringVerifier is the full binary's approval verifier: the keyring, in
// this process.
func keyringVerifier(dir string) (approval.Verifier, error) {
	ring, err := keys.LoadKeyring(dir)
	if err != nil {
		return nil, err
	}
	return ring, nil
}
