package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fixrail/fixrail/internal/config"
)

// Agent is what Open builds: the agent, one call per invocation.
type Agent interface {
	Run(ctx context.Context, inv Invocation) (Result, error)
}

// Open builds the agent adapter fixrail.yaml's runner block names. hook is the
// argv that runs fixrail's phase hook, [fixrail binary, "hook"]; the claude
// adapter appends the phase's flags to it for every invocation. A kind whose
// agent cannot be held to the rails is refused here, before a run starts,
// with the capabilities it lacks: fixrail does not run an agent with weaker
// rails than the ones it documents.
func Open(rc config.Runner, hook []string) (Agent, error) {
	switch rc.Kind {
	case "command":
		return &Command{Argv: rc.Command, RO: rc.ROPaths, RW: rc.RWPaths, Network: rc.Network}, nil
	case "claude":
		if len(hook) == 0 || !filepath.IsAbs(hook[0]) {
			return nil, fmt.Errorf("runner.kind claude needs the phase hook command with an absolute path, got %q", hook)
		}
		return &Claude{Binary: rc.Binary, Model: rc.Model, Hook: hook}, nil
	case "codex":
		if err := CheckCodex(); err != nil {
			return nil, err
		}
		return nil, errors.New("runner.kind codex: no adapter is built yet although its capabilities are all present")
	}
	return nil, fmt.Errorf("runner.kind %q is not supported", rc.Kind)
}
