package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitializedFirst: hookstart sets one processor and grows the stack
// before the packages whose initialisation (and the hook's work after it)
// would otherwise grow it step by step. The runtime's inittrace of the built
// binary lists the packages in the order they ran; only the runtime's own,
// which do no work that grows a stack, may come before it — and math, ready
// before the runtime that hookstart imports, whose init copies two CPU
// feature flags.
func TestInitializedFirst(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fixrail-hook")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "hook", "--event", "pre")
	cmd.Stdin = strings.NewReader(`{}`) // not a tool event: answered without a decision
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "FIXRAIL_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fixrail-hook: %v\n%s", err, out)
	}
	const self = "github.com/fixrail/fixrail/internal/hookstart"
	var before []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		if f[1] == self {
			for _, p := range before {
				if p != "runtime" && p != "math" && !strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "crypto/internal/fips140deps/") {
					t.Errorf("%s initialised before %s", p, self)
				}
			}
			return
		}
		before = append(before, f[1])
	}
	t.Fatalf("%s not in the init trace (it has no init, or is not linked):\n%s", self, out)
}
