package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/fixrail/fixrail/internal/approval"
	"github.com/fixrail/fixrail/internal/approval/sshkey"
	"github.com/fixrail/fixrail/internal/hook"
	"github.com/fixrail/fixrail/internal/untrusted"
)

var cmdApprove = &command{
	Name:  "approve",
	Usage: "[--key FILE] [--ttl DURATION] [--yes] CALLKEY|PENDING_FILE\n       fixrail approve --list [--json]\n       fixrail approve --init-key FILE",
	Short: "sign the request a gate printed, with the owner's approval key",
	Long: `
Approve signs one gated tool call so that its next identical attempt runs
once. The argument is the call key a denial printed, or a pending request
file. Approve shows the request, asks y/N on standard input unless --yes,
signs it with the approval key (--key, or $FIXRAIL_APPROVAL_KEY: an
unencrypted OpenSSH private key or a native key from --init-key), checks
that the hook's keyring ($FIXRAIL_HOME/keys) would accept the signature, and
writes the token to $FIXRAIL_HOME/approvals/tokens/.

--list shows the calls waiting for approval and their call keys (the denial
went to the agent, which may not have passed it on); --json prints them as
JSON.

Without --ttl the request is signed exactly as printed and expires when it
says. With --ttl a fresh request for the same call (new nonce) is signed,
valid for that long (at most 24h).

A passphrase-protected or FIDO key signs with ssh-keygen instead, as the
denial shows:
  ssh-keygen -Y sign -n fixrail-approval -f KEY PENDING_FILE

--init-key FILE makes a native ed25519 approval key: the private key at FILE
(mode 0600; never under $FIXRAIL_HOME) and its public key in
$FIXRAIL_HOME/keys.

Key custody: the approval key must be out of the agent's reach — not in an
ssh-agent whose socket the agent's shell inherits, not under any path the
agent may read (not the repository, not $FIXRAIL_HOME; ideally not the
agent user's home), ideally a FIDO key that needs a touch. The policy gates
the agent's own attempts to run fixrail approve or to read the key as
self-mod.

Exit status: 0 approved, 3 declined at the prompt, 1 on any error.`,
	Flags: func() *flag.FlagSet { fs, _ := approveFlags(); return fs },
	Run:   runApprove,
}

// maxApprovalTTL bounds --ttl: an approval is for a call about to be retried.
const maxApprovalTTL = 24 * time.Hour

type approveOpts struct {
	key, initKey string
	ttl          time.Duration
	yes          bool
	list, json   bool
}

func approveFlags() (*flag.FlagSet, *approveOpts) {
	o := &approveOpts{}
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	fs.StringVar(&o.key, "key", "", "the approval private key `file` (default $FIXRAIL_APPROVAL_KEY)")
	fs.DurationVar(&o.ttl, "ttl", 0, "sign a fresh request valid for this `duration` instead of the printed one")
	fs.BoolVar(&o.yes, "yes", false, "do not ask for confirmation")
	fs.StringVar(&o.initKey, "init-key", "", "generate a native ed25519 approval key at `file` and add its public key to the keyring")
	fs.BoolVar(&o.list, "list", false, "list the calls waiting for approval, with their call keys")
	fs.BoolVar(&o.json, "json", false, "with --list: as JSON")
	return fs, o
}

// errDeclined is a "no" at approve's prompt. Like a declined interactive run
// it exits 3.
var errDeclined error = &codedError{msg: "not approved; nothing was signed", code: exitHalt}

func runApprove(ctx context.Context, stdio Stdio, args []string) error {
	fs, o := approveFlags()
	if err := parseFlags(fs, stdio, args); err != nil {
		return err
	}
	home, err := hook.HomeDir(os.LookupEnv)
	if err != nil {
		return err
	}
	if o.initKey != "" {
		if fs.NArg() > 0 || o.key != "" || o.ttl != 0 || o.list {
			return usagef("--init-key takes no other arguments")
		}
		return initKey(stdio, o.initKey, home)
	}
	if o.list {
		if fs.NArg() > 0 || o.key != "" || o.ttl != 0 || o.yes {
			return usagef("--list takes no other arguments but --json")
		}
		return listPending(stdio, &approval.Store{Dir: filepath.Join(home, hook.ApprovalsDir)}, o.json, time.Now())
	}
	if o.json {
		return usagef("--json goes with --list")
	}
	if fs.NArg() != 1 {
		return usagef("approve takes one call key or pending request file")
	}
	if o.ttl < 0 || o.ttl > maxApprovalTTL {
		return usagef("--ttl must be between 0 and %v", maxApprovalTTL)
	}
	keyPath, err := approvalKeyPath(o.key, home)
	if err != nil {
		return err
	}
	key, err := sshkey.Load(keyPath)
	if err != nil {
		return err
	}
	store := &approval.Store{Dir: filepath.Join(home, hook.ApprovalsDir)}
	req, err := loadRequest(store, fs.Arg(0))
	if err != nil {
		return err
	}
	now := time.Now()
	if o.ttl > 0 {
		if req, err = approval.NewRequest(req.Tool, req.Input, req.Cwd, req.Rule, o.ttl, now); err != nil {
			return err
		}
	} else if !now.Before(req.Expires) {
		return fmt.Errorf("the request expired at %s; retry the call for a new one, or pass --ttl to approve it afresh",
			req.Expires.UTC().Format(time.RFC3339))
	}

	showRequest(stdio.Stderr, req, now)
	if !o.yes {
		ok, err := confirmer(stdio)(ctx, "Sign this request with "+keyPath+"?")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(stdio.Stderr)
			return errDeclined
		}
	}
	tok, err := key.Approve(req)
	if err != nil {
		return err
	}
	// Refuse to leave a token the hook would reject (and delete) anyway.
	kr, err := loadKeyring(home)
	if err != nil {
		return err
	}
	if err := kr.Verify(tok, now); err != nil {
		return fmt.Errorf("the hook would reject this approval (%w); add the key's public half to %s",
			err, filepath.Join(home, hook.KeysDir))
	}
	if err := store.SaveToken(tok); err != nil {
		return err
	}
	callKey, err := req.CallKey()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "approved %s (%s): the next identical %s call runs once, until %s\n",
		callKey, req.Rule, req.Tool, req.Expires.UTC().Format(time.RFC3339))
	// Housekeeping while the owner is here: forget spent nonces and pending
	// requests that expired over a day ago (a day of margin for clock steps;
	// see approval.Store.Prune). A failure only leaves files behind.
	if err := store.Prune(now.Add(-24 * time.Hour)); err != nil {
		fmt.Fprintf(stdio.Stderr, "fixrail approve: %v\n", err)
	}
	return nil
}

// loadRequest reads the request to approve: a call key names the pending
// request in the store; anything else is a pending request file.
func loadRequest(s *approval.Store, arg string) (*approval.Request, error) {
	if isCallKey(arg) {
		r, err := s.Pending(arg)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no pending request for call %s (already approved and used, pruned, or never denied)", arg)
		}
		return r, err
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	var r approval.Request
	if err := json.Unmarshal(bytes.TrimSpace(data), &r); err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return &r, nil
}

func isCallKey(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// approvalKeyPath finds the private key (sshkey.Locate); no key named is a
// usage error.
func approvalKeyPath(flagValue, home string) (string, error) {
	p, err := sshkey.Locate(flagValue, home, os.Getenv)
	if errors.Is(err, sshkey.ErrNoKey) {
		return "", usagef("%v", err)
	}
	return p, err
}

// showRequest prints what is about to be signed. The input comes from the
// agent, so control and formatting characters are escaped: a request must
// not be able to repaint the terminal it is approved on. The one-line
// values are escaped to one line (untrusted.OneLine): the working
// directory is the agent's to choose (a cd into a directory whose name
// holds newlines), and it must not print lines that pass for the
// request's own — an input, an expiry, a digest.
func showRequest(w io.Writer, r *approval.Request, now time.Time) {
	in := r.Input
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, in, "           ", "  "); err == nil {
		in = pretty.Bytes()
	}
	fmt.Fprintf(w, "Approve this tool call?\n")
	fmt.Fprintf(w, "  rule     %s\n", untrusted.OneLine(r.Rule))
	fmt.Fprintf(w, "  tool     %s\n", untrusted.OneLine(r.Tool))
	fmt.Fprintf(w, "  cwd      %s\n", untrusted.OneLine(r.Cwd))
	fmt.Fprintf(w, "  input    %s\n", untrusted.Printable(string(in)))
	fmt.Fprintf(w, "  expires  %s (in %s)\n", r.Expires.UTC().Format(time.RFC3339), r.Expires.Sub(now).Round(time.Second))
	fmt.Fprintf(w, "  request  sha256 %s\n", r.Digest())
}

// initKey writes a new native approval key (sshkey.Init) and says where.
func initKey(stdio Stdio, path, home string) error {
	pubPath, err := sshkey.Init(path, home, filepath.Join(home, hook.KeysDir))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "private key %s (keep it out of the agent's reach)\npublic key  %s\n", path, pubPath)
	return nil
}

// pendingJSON is one line of approve --list --json.
type pendingJSON struct {
	CallKey string          `json:"call_key"`
	Rule    string          `json:"rule"`
	Tool    string          `json:"tool"`
	Cwd     string          `json:"cwd"`
	Input   json.RawMessage `json:"input"`
	Expires time.Time       `json:"expires"`
	Expired bool            `json:"expired"`
}

// listPending prints the calls waiting for approval: what the owner needs
// when the denial went to the agent's transcript, not to them.
func listPending(stdio Stdio, s *approval.Store, asJSON bool, now time.Time) error {
	ps, err := s.PendingRequests()
	if err != nil {
		return err
	}
	if asJSON {
		out := []pendingJSON{}
		for _, p := range ps {
			r := p.Request
			out = append(out, pendingJSON{CallKey: p.CallKey, Rule: r.Rule, Tool: r.Tool, Cwd: r.Cwd, Input: r.Input, Expires: r.Expires.UTC(), Expired: !now.Before(r.Expires)})
		}
		enc := json.NewEncoder(stdio.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(ps) == 0 {
		fmt.Fprintln(stdio.Stderr, "no calls are waiting for approval")
		return nil
	}
	for _, p := range ps {
		r := p.Request
		when := "expires in " + r.Expires.Sub(now).Round(time.Second).String()
		if !now.Before(r.Expires) {
			when = "expired"
		}
		in := string(r.Input)
		if len(in) > 120 {
			cut := 117
			for cut > 0 && !utf8.RuneStart(in[cut]) {
				cut--
			}
			in = in[:cut] + "..."
		}
		fmt.Fprintf(stdio.Stdout, "%s  %s  %s  %s\n    %s\n", p.CallKey, untrusted.OneLine(r.Rule), untrusted.OneLine(r.Tool), when, untrusted.OneLine(in))
	}
	fmt.Fprintln(stdio.Stderr, "approve one with: fixrail approve CALLKEY")
	return nil
}
