package hookcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/approval"
)

// VerifyArgs is the command line, after the binary, that checks one token:
// `fixrail hook verify-approval --keys DIR --at TIME`, the token's JSON on
// standard input. It answers VerifiedLine on standard output, and nothing
// else, when the signature verifies; any other answer rejects the token.
func VerifyArgs(keysDir string, now time.Time) []string {
	return []string{"hook", "verify-approval", "--keys", keysDir, "--at", now.UTC().Format(time.RFC3339Nano)}
}

// VerifiedLine is verify-approval's whole answer for a token that verifies:
// it names the request's digest, so that a binary that is not fixrail (one
// that exits 0 whatever it is given) verifies nothing.
func VerifiedLine(t *approval.Token) string { return "verified " + t.Request.Digest() + "\n" }

// verifyTimeout bounds the verifier's run. An agent CLI that times a hook
// out lets the call run (hook install registers a 30 s timeout), so a
// verifier that hangs must be a rejection well before.
const verifyTimeout = 20 * time.Second

// ExecVerifier is the keys loader of a hook that links no signature code
// (fixrail-hook): the fixrail binary bin checks each approval, in a process
// of its own, only when a token was claimed for a gated call. Linking the
// keyring's ed25519, ECDSA and RSA code cost every call its package
// initialisation (0.03x a no-op process's start on an allowed call, 0.04-
// 0.08x on a denied one, measured side by side; README, Measured cost),
// while a token to check is rare. bin is run by its absolute
// path with an empty environment; an empty bin, a binary that cannot run or
// an answer other than VerifiedLine rejects the token.
func ExecVerifier(bin string) func(dir string) (approval.Verifier, error) {
	return func(dir string) (approval.Verifier, error) {
		return &execVerifier{bin: bin, dir: dir, timeout: verifyTimeout}, nil
	}
}

type execVerifier struct {
	bin, dir string
	timeout  time.Duration
}

func (v *execVerifier) Verify(t *approval.Token, now time.Time) error {
	if v.bin == "" {
		return errors.New("no fixrail binary to verify the approval with (fixrail-hook could not locate itself; pass --verifier)")
	}
	in, err := json.Marshal(t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.bin, VerifyArgs(v.dir, now)...)
	cmd.Env = []string{}
	// A child the verifier left holding its output must not hold the hook.
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if runErr == nil && stdout.String() == VerifiedLine(t) {
		return nil
	}
	why := strings.TrimSpace(stderr.String())
	if i := strings.IndexByte(why, '\n'); i >= 0 {
		why = why[:i]
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the verifier %s did not answer within %v", v.bin, v.timeout)
	case errors.As(runErr, &exit) && exit.ExitCode() == 5 && why != "":
		return fmt.Errorf("%s (checked by %s)", why, v.bin)
	case runErr == nil:
		return fmt.Errorf("the verifier %s did not answer as fixrail does (%q)", v.bin, strings.TrimSpace(stdout.String()))
	case why != "":
		return fmt.Errorf("the verifier %s failed: %v: %s", v.bin, runErr, why)
	}
	return fmt.Errorf("the verifier %s failed: %v", v.bin, runErr)
}

// capped keeps the first 4 KiB written to it: enough for an answer and a
// reason, never a flood into the hook's memory.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 4096 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
