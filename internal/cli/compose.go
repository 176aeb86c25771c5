package cli

import (
	"fmt"
	"os"

	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/pipeline"
	"github.com/fixrail/fixrail/internal/runner"
	"github.com/fixrail/fixrail/internal/runner/model"
)

// seams are what the CLI builds from the configuration and hands to the
// pipeline: the CLI is the composition root, and the pipeline never
// chooses an agent, a forge or a model itself.
type seams struct {
	runner pipeline.Runner
	forge  pipeline.Forge
	model  gates.Completer
	// types are the fix types bound to what the CLI chose for them (the
	// cve type to its advisory source).
	types []*fixtype.Type
}

// compose builds the runner fixrail.yaml names (with this binary as the
// phase hook), the local forge (the repository's outbox), the single-shot
// model, if one is configured, and, given an advisory source, the cve
// type bound to it (nil leaves the registry's: the default cache, offline).
func compose(s *pipeline.Setup, vulns cve.Source) (seams, error) {
	exe, err := os.Executable()
	if err != nil {
		return seams{}, fmt.Errorf("%w: locate the fixrail binary for the phase hook: %w", pipeline.ErrSetup, err)
	}
	cfg := s.Config
	agent, err := runner.Open(cfg.Runner, []string{exe, "hook"})
	if err != nil {
		return seams{}, fmt.Errorf("%w: %w", pipeline.ErrSetup, err)
	}
	outbox, err := s.StateDir("outbox")
	if err != nil {
		return seams{}, err
	}
	out := seams{runner: agent, forge: &forge.Local{Dir: outbox}}
	if vulns != nil {
		out.types = append(out.types, fixtype.NewCVE(vulns))
	}
	if cfg.Model.Kind != "" {
		m, err := model.Open(model.Settings{Kind: cfg.Model.Kind, Model: cfg.Model.Model, BaseURL: cfg.Model.BaseURL, Binary: cfg.Model.Binary, Timeout: cfg.Model.Timeout}, os.LookupEnv)
		if err != nil {
			return seams{}, fmt.Errorf("%w: %w", pipeline.ErrSetup, err)
		}
		out.model = m
	}
	return out, nil
}
