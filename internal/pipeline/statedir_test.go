package pipeline_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// Runs started at once on a fresh clone all make the state directory: none
// may fail because another made it, or its .gitignore, first.
func TestStateDirConcurrentRuns(t *testing.T) {
	for round := range 20 {
		dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": "runner: {kind: command, command: [\"true\"]}\nsuite: {command: [\"true\"]}\n"})
		s, err := pipeline.Prepare(t.Context(), dir, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		// One process or eight: the race is on the files, so goroutines
		// calling StateDir at once stand in for runs started at once.
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				if _, err := s.StateDir([]string{"runs", "outbox", ""}[i%3]); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, pipeline.StateDirName, ".gitignore")); err != nil || string(b) != "*\n" {
			t.Fatalf("round %d: .gitignore %q, %v", round, b, err)
		}
	}
}

// A .gitignore link committed into the state directory is not written
// through, and the state directory itself may not be a link.
func TestStateDirPlantedLinks(t *testing.T) {
	dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": "runner: {kind: command, command: [\"true\"]}\nsuite: {command: [\"true\"]}\n"})
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.Mkdir(filepath.Join(dir, pipeline.StateDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, pipeline.StateDirName, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.StateDir("runs"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(outside); !os.IsNotExist(err) {
		t.Fatalf("wrote through the planted .gitignore link: %v", err)
	}

	dir2 := gittest.NewRepo(t, map[string]string{"fixrail.yaml": "runner: {kind: command, command: [\"true\"]}\nsuite: {command: [\"true\"]}\n"})
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir2, pipeline.StateDirName)); err != nil {
		t.Fatal(err)
	}
	s2, err := pipeline.Prepare(t.Context(), dir2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.StateDir(""); err == nil {
		t.Fatal("a symlinked state directory was accepted")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("wrote through the symlinked state directory: %v", ents)
	}
}

// TestStateSubdirLinks: the directories StateDir gives out — runs (the
// reports and event logs), outbox (bundles and notices) — refused when
// they are a symbolic link, to a directory outside the clone or inside it,
// or a file; nothing is written where a link points. (locks and rundirs:
// the scenario run_state_subdir_symlink.)
func TestStateSubdirLinks(t *testing.T) {
	for _, sub := range []string{"runs", "outbox"} {
		for _, kind := range []string{"outside", "inside", "file"} {
			t.Run(sub+"/"+kind, func(t *testing.T) {
				dir := gittest.NewRepo(t, map[string]string{"fixrail.yaml": "runner: {kind: command, command: [\"true\"]}\nsuite: {command: [\"true\"]}\n"})
				state := filepath.Join(dir, pipeline.StateDirName)
				if err := os.MkdirAll(filepath.Join(state, "elsewhere"), 0o755); err != nil {
					t.Fatal(err)
				}
				outside := t.TempDir()
				switch kind {
				case "outside":
					err := os.Symlink(outside, filepath.Join(state, sub))
					if err != nil {
						t.Fatal(err)
					}
				case "inside":
					if err := os.Symlink("elsewhere", filepath.Join(state, sub)); err != nil {
						t.Fatal(err)
					}
				case "file":
					if err := os.WriteFile(filepath.Join(state, sub), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				s, err := pipeline.Prepare(t.Context(), dir, "")
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_, err = s.StateDir(sub)
				if !errors.Is(err, pathguard.ErrNotPlainDir) || !errors.Is(err, pipeline.ErrSetup) {
					t.Fatalf("StateDir(%q) = %v, want ErrSetup and ErrNotPlainDir", sub, err)
				}
				for _, d := range []string{outside, filepath.Join(state, "elsewhere")} {
					if ents, _ := os.ReadDir(d); len(ents) != 0 {
						t.Errorf("wrote through the link into %s: %v", d, ents)
					}
				}
			})
		}
	}
}
