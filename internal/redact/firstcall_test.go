package redact

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestFirstCallInProcess: the token rules are built on first use, so the
// first scan in a process must build them itself. In this test binary other
// tests have usually built them already, so a child process runs only this.
func TestFirstCallInProcess(t *testing.T) {
	tok := "gh" + "p_" + synthetic(csAlnum, 36)
	if os.Getenv("FIXRAIL_REDACT_FIRST_CALL") == "1" {
		e, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		out, fs, err := e.Redact("see " + tok + " here")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, tok) || len(fs) != 1 || fs[0].Rule != "github-pat" {
			t.Fatalf("first Redact in the process: %q, findings %+v; want the token redacted as github-pat", out, fs)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirstCallInProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FIXRAIL_REDACT_FIRST_CALL=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
