package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
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
		return &Command{Argv: rc.Command, RO: rc.ROPaths, RW: rc.RWPaths}, nil
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

// AnthropicAPI is the model API the claude kind reaches when
// ANTHROPIC_BASE_URL does not name another.
var AnthropicAPI = egress.Target{Host: "api.anthropic.com", Port: 443}

// DefaultEgress is the allowlist of a runner kind whose runner.egress is
// unset: exactly the model API it is configured for. For claude that is
// ANTHROPIC_BASE_URL's host and port, as lookup (nil: os.LookupEnv) finds
// it, or the Anthropic API; the command kind has no model API fixrail
// knows of, and reaches nothing.
func DefaultEgress(kind string, lookup func(string) (string, bool)) ([]egress.Target, error) {
	if kind != "claude" {
		return nil, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	base, ok := lookup("ANTHROPIC_BASE_URL")
	if !ok || strings.TrimSpace(base) == "" {
		return []egress.Target{AnthropicAPI}, nil
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("ANTHROPIC_BASE_URL %q is not an http(s) URL, so the model API the agent may reach is unknown (list it in runner.egress)", base)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	t, err := egress.ParseTarget(net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, fmt.Errorf("ANTHROPIC_BASE_URL: %w", err)
	}
	return []egress.Target{t}, nil
}
