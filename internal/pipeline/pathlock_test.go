package pipeline_test

import (
	"context"
	"io"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/forge/forgetest"
	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/ledger/pgtest"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
)

// gatedAgent is scriptedAgent whose fix phase can be held open.
type gatedAgent struct {
	inFix   chan struct{} // closed when the fix phase starts (nil: not watched)
	release chan struct{} // the fix phase waits for it (nil: no wait)
	started *time.Time    // when the fix phase started
}

func (a gatedAgent) Run(ctx context.Context, inv runner.Invocation) (runner.Result, error) {
	if inv.Phase == runner.Fix {
		*a.started = time.Now()
		if a.inFix != nil {
			close(a.inFix)
		}
		if a.release != nil {
			<-a.release
		}
	}
	return scriptedAgent{}.Run(ctx, inv)
}

// TestFindingsOnTheSameFileSerialise (S7): two findings whose plans touch
// the same file do not fix it at once; the second waits in P3 until the
// first run ends, then goes on to its own draft PR. On one machine (one
// clone, its SQLite ledger) and on two (two clones, each its own state
// directory, one Postgres ledger): the ledger's path holds are what
// serialise, so nothing a machine keeps to itself can.
func TestFindingsOnTheSameFileSerialise(t *testing.T) {
	files := map[string]string{"src/README": "source\n", "tests/.keep": ""}
	for _, tc := range []struct {
		name  string
		repos func(t *testing.T) (a, b string)
	}{
		{"one machine", func(t *testing.T) (string, string) {
			dir := gittest.NewRepo(t, withFile(files, "fixrail.yaml", reasonsYAML))
			return dir, dir
		}},
		{"two machines, one ledger", func(t *testing.T) (string, string) {
			yaml := reasonsYAML + "ledger: {url: \"" + pgtest.URL(t) + "\"}\n"
			return gittest.NewRepo(t, withFile(files, "fixrail.yaml", yaml)), gittest.NewRepo(t, withFile(files, "fixrail.yaml", yaml))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirA, dirB := tc.repos(t)
			run := func(dir, id string, agent gatedAgent, console io.Writer) *pipeline.Report {
				s, err := pipeline.Prepare(t.Context(), dir, "")
				if err != nil {
					t.Error(err)
					return nil
				}
				defer s.Close()
				f := forgetest.New(t)
				f.ExpectAssertProtected(forgetest.Protected).ExpectOpenWork(forgetest.NoWork).ExpectCheckAccess(forgetest.Permitted).ExpectFixFiles(forgetest.NoFixes).ExpectPublish(forgetest.Published(1)).ExpectWaitChecks(forgetest.NoCI)
				rep, err := pipeline.Run(t.Context(), s, pipeline.Params{
					Finding: &findings.Finding{ID: id, Title: "broken", Body: "it is BROKEN"},
					Runner:  agent, Forge: f, TempDir: t.TempDir(), Console: console,
					// One repository on the forge, whichever clone runs.
					ForgeRepo: "o/r",
				})
				if err != nil {
					t.Error(err)
				}
				return rep
			}
			var firstFix, secondFix time.Time
			inFix, release := make(chan struct{}), make(chan struct{})
			var released time.Time
			var wg sync.WaitGroup
			var first, second *pipeline.Report
			wg.Add(1)
			go func() {
				defer wg.Done()
				first = run(dirA, "first", gatedAgent{inFix: inFix, release: release, started: &firstFix}, nil)
			}()
			<-inFix // the first run is fixing src/fixed now
			wg.Add(1)
			waiting := &signalWriter{want: "(finding first) is fixing src/fixed; waiting", seen: make(chan struct{})}
			go func() { defer wg.Done(); second = run(dirB, "second", gatedAgent{started: &secondFix}, waiting) }()
			select {
			case <-waiting.seen: // the second run reached P3 and waits for the file
			case <-time.After(90 * time.Second):
				close(release)
				wg.Wait()
				t.Fatal("the second run never waited for the file the first is fixing")
			}
			released = time.Now()
			close(release)
			wg.Wait()
			if first == nil || second == nil || first.Terminal != pipeline.DraftPR || second.Terminal != pipeline.DraftPR {
				t.Fatalf("runs ended %+v and %+v, want two DRAFT-PRs", first, second)
			}
			if !secondFix.After(released) {
				t.Errorf("the second run's fix started at %v, before the first released the file at %v", secondFix, released)
			}
			waited := false
			for _, g := range second.Gates {
				if g.Name == "path-locks" && g.Verdict == "pass" && strings.Contains(g.Detail, "waited for another run fixing") {
					waited = true
				}
			}
			if !waited {
				t.Errorf("the second run's path-locks gate does not say it waited: %+v", second.Gates)
			}
			// Nothing left held: a third run on the same file goes straight through.
			var third time.Time
			if rep := run(dirB, "third", gatedAgent{started: &third}, nil); rep == nil || rep.Terminal != pipeline.DraftPR {
				t.Fatalf("third run: %+v", rep)
			}
		})
	}
}

// withFile is files plus one more.
func withFile(files map[string]string, name, content string) map[string]string {
	out := maps.Clone(files)
	out[name] = content
	return out
}

// signalWriter closes seen once a console line holds want.
type signalWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
	done bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}
