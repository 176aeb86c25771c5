package cli

import (
	"fmt"
	"os"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/fixtype"
	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/forge/github"
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
	// issues reads the finding's issue (the GitHub forge); nil for the
	// local forge.
	issues findings.IssueSource
	// alerts reads the finding's Dependabot alert (the GitHub forge).
	alerts findings.AlertSource
	// scanAlerts reads code- and secret-scanning alerts (the GitHub forge).
	scanAlerts findings.ScanAlertSource
	// types are the fix types bound to what the CLI chose for them (the
	// cve type to its advisory source).
	types []*fixtype.Type
}

// compose builds the runner fixrail.yaml names (with this binary as the
// phase hook), the forge — GitHub for repo ("owner/name"; the token and
// API URL from the environment, pushes through the clone's pinned
// remote), else the local forge (the repository's outbox) — the
// single-shot model, if one is configured, and, given an advisory source,
// the cve type bound to it (nil leaves the registry's: the default cache,
// offline).
func compose(s *pipeline.Setup, repo string, vulns cve.Source) (seams, error) {
	exe, err := os.Executable()
	if err != nil {
		return seams{}, fmt.Errorf("%w: locate the fixrail binary for the phase hook: %w", pipeline.ErrSetup, err)
	}
	cfg := s.Config
	agent, err := runner.Open(cfg.Runner, []string{exe, "hook"})
	if err != nil {
		return seams{}, fmt.Errorf("%w: %w", pipeline.ErrSetup, err)
	}
	out := seams{runner: agent}
	if repo != "" {
		f, err := github.FromEnv(os.LookupEnv, repo, s.Repo)
		if err != nil {
			return seams{}, fmt.Errorf("%w: %w", pipeline.ErrSetup, err)
		}
		// forge.push_to: the branch goes to the fork and the draft is
		// opened from it, so the PR's workflows run without secrets.
		if err := f.SetPushTo(cfg.Forge.PushTo); err != nil {
			return seams{}, fmt.Errorf("%w: %s: %w", pipeline.ErrSetup, config.FileName, err)
		}
		out.forge, out.issues, out.alerts, out.scanAlerts = f, f, f, f
	} else {
		outbox, err := s.StateDir("outbox")
		if err != nil {
			return seams{}, err
		}
		out.forge = &forge.Local{Dir: outbox}
	}
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
