package hookstart

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOneProcessor runs this test binary again with GOMAXPROCS=4 in its
// environment (the runtime starts with four Ps whatever the machine's cores)
// and reads how many the child has once the package's init has run.
func TestOneProcessor(t *testing.T) {
	if os.Getenv("HOOKSTART_CHILD") == "1" {
		os.Stdout.WriteString(strconv.Itoa(runtime.GOMAXPROCS(0)))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOneProcessor$")
	cmd.Env = append(os.Environ(), "HOOKSTART_CHILD=1", "GOMAXPROCS=4")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "1" {
		t.Errorf("GOMAXPROCS after init = %q, want 1 (the environment asked for 4)", got)
	}
}
