package pipeline

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/fixrail/fixrail/internal/sandbox"
)

// hidden is what no sandbox of a run on s may show (sandbox.Hidden): the
// repository, its git directory, .fixrail, the run's own directory (once
// made) and tempDir, where every run's directory is made.
func (s *Setup) hidden(tempDir, runDir string) sandbox.Hidden {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	return sandbox.Hidden{
		Repo:   s.Repo.Top(),
		GitDir: s.Repo.CommonDir(),
		State:  filepath.Join(s.Repo.Top(), StateDirName),
		RunDir: runDir,
		Temp:   tempDir,
	}
}

// hide is what no sandbox of this run may show.
func (r *run) hide() sandbox.Hidden { return r.s.hidden(r.p.TempDir, r.dir) }

// SandboxPlans are the filesystems a run on s would give its agent and its
// test commands, as far as they are fixed before it starts: the system
// roots, the PATH entries of env (the agent's and the tests' PATH is
// fixrail's own), sandbox.ro_paths for the tests and, for a command
// agent, runner.ro_paths and runner.rw_paths — each held to what no
// sandbox may show. tempDir is Params.TempDir. P1 checks them and doctor
// reports them: one function, so that doctor says what a run does. What
// each command adds (its checkout or tree, the caches fixrail finds, the
// claude adapter's install and phase hook) is held to the same rules when
// it runs. An error wrapping sandbox.ErrExposes is a layout no run starts
// in.
func (s *Setup) SandboxPlans(tempDir string, env []string) (agent, tests sandbox.MountPlan, err error) {
	h := s.hidden(tempDir, "")
	a := sandbox.Spec{Hide: h}
	if s.Config.Runner.Kind == "command" {
		a.RO, a.RW = s.Config.Runner.ROPaths, s.Config.Runner.RWPaths
	}
	if agent, err = a.Mounts(env); err != nil {
		return agent, tests, err
	}
	tests, err = (&sandbox.Spec{Hide: h, RO: s.Config.SandboxROPaths}).Mounts(env)
	return agent, tests, err
}

// checkSandboxPlans is P1's look at the sandboxes the run will use: one
// that would show the repository, .fixrail or fixrail itself, or that
// cannot be built as configured, HALTs no-sandbox before anything runs;
// a PATH entry left out for what it would show is said on the console.
func (r *run) checkSandboxPlans() *Outcome {
	if r.sandboxMode() == sandbox.Off {
		return nil
	}
	agent, tests, err := r.s.SandboxPlans(r.p.TempDir, os.Environ())
	if err != nil {
		return stop(Halt, ReasonNoSandbox, "the sandbox cannot be built as asked: "+err.Error())
	}
	withheld := agent.Withheld()
	for _, w := range tests.Withheld() {
		if !slices.Contains(withheld, w) {
			withheld = append(withheld, w)
		}
	}
	for _, w := range withheld {
		r.note("sandbox", "not mounted: "+w)
	}
	return nil
}
