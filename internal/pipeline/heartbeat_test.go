package pipeline_test

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// lockedBuffer is a console the heartbeat goroutines and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHeartbeatSteps: on a plain console, every kind of long step the
// pipeline runs says it is still running, under its phase — the agent,
// a command the harness runs (here the suite), the wait for CI — and no
// line follows a step that ended.
func TestHeartbeatSteps(t *testing.T) {
	const slow = 150 * time.Millisecond
	yaml := `runner: {kind: command, command: ["true"]}
test:   {command: ["sh", "{test_path}"], path_glob: "tests/**"}
suite:  {command: ["sh", "-c", "sleep 0.15"]}
paths:  {fixable: ["src/**"]}
sandbox: off
`
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": yaml, "src/README": "source\n", "tests/.keep": ""})
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := forgetest.New(t)
	f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).
		ExpectPublish(forgetest.Published(3)).
		ExpectWaitChecks(func(pub forge.Published, d time.Time, req []forge.CheckRef) (forge.CIResult, error) {
			time.Sleep(slow)
			return forgetest.NoCI(pub, d, req)
		})
	var console lockedBuffer
	rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
		Finding: &findings.Finding{ID: "slow", Title: "broken", Body: "it is BROKEN"},
		Runner: funcAgent(func(inv runner.Invocation) (runner.Result, error) {
			time.Sleep(slow)
			return goodAgent(inv)
		}),
		Forge:   f,
		TempDir: t.TempDir(),
		Console: events.NewPlain(&console, 20*time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Terminal != pipeline.DraftPR {
		t.Fatalf("ended %s %s: %s", rep.Terminal, rep.Reason, rep.Detail)
	}
	out := console.String()
	for _, want := range []string{
		`(?m)^fixrail: P2 investigate: the agent \(investigate\) still running after 0:00$`,
		`(?m)^fixrail: P4 fix: the agent \(fix\) still running after 0:00$`,
		"(?m)^fixrail: P4 fix: `sh -c sleep 0.15` still running after 0:00$",
		`(?m)^fixrail: P5 terminal: the wait for CI on \S+ still running after 0:00$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	// Nothing ticks once the run is over.
	time.Sleep(60 * time.Millisecond)
	if after := console.String(); after != out {
		t.Errorf("heartbeat after the run: %q", after[len(out):])
	}
}
