package model

import (
	"fmt"
	"os"
	"time"
)

// The backend kinds, as a configuration names them.
const (
	KindAnthropic = "anthropic"
	KindOpenAI    = "openai"
	KindClaude    = "claude"
)

// Settings select and tune a backend. None of them is a credential.
type Settings struct {
	Kind  string // KindAnthropic, KindOpenAI or KindClaude
	Model string // the model id; empty lets the claude CLI choose
	// BaseURL overrides the endpoint; empty means ANTHROPIC_BASE_URL or
	// OPENAI_BASE_URL from the environment, else the vendor's URL. The
	// claude CLI reads ANTHROPIC_BASE_URL itself.
	BaseURL string
	Binary  string        // the claude CLI; empty means "claude" on PATH
	Timeout time.Duration // one attempt; 0 means DefaultTimeout
	// Attempts is how many calls WithRetry makes in all; 0 means 3.
	Attempts int
	// Backoff is WithRetry's first wait; 0 means 2s.
	Backoff time.Duration
}

// The environment variables the API keys are read from; nothing else
// supplies a key.
const (
	AnthropicKeyEnv = "ANTHROPIC_API_KEY"
	OpenAIKeyEnv    = "OPENAI_API_KEY"
)

// Open returns the backend s names, wrapped in WithRetry, reading its API
// key from the environment through lookup (nil means os.LookupEnv). A
// missing key is an error naming the variable. The claude CLI gets the key
// from the same variable through its environment allowlist.
func Open(s Settings, lookup func(string) (string, bool)) (Backend, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	attempts, backoff := s.Attempts, s.Backoff
	if attempts == 0 {
		attempts = 3
	}
	if backoff == 0 {
		backoff = 2 * time.Second
	}
	env := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	var b Backend
	switch s.Kind {
	case KindAnthropic, KindOpenAI:
		keyEnv, urlEnv := AnthropicKeyEnv, "ANTHROPIC_BASE_URL"
		if s.Kind == KindOpenAI {
			keyEnv, urlEnv = OpenAIKeyEnv, "OPENAI_BASE_URL"
		}
		key := env(keyEnv)
		if key == "" {
			return nil, fmt.Errorf("model: %s needs %s in the environment", s.Kind, keyEnv)
		}
		if s.Model == "" {
			return nil, fmt.Errorf("model: %s needs a model id", s.Kind)
		}
		base := s.BaseURL
		if base == "" {
			base = env(urlEnv)
		}
		if s.Kind == KindAnthropic {
			a := NewAnthropic(key, base, s.Model)
			a.Timeout = s.Timeout
			b = a
		} else {
			o := NewOpenAI(key, base, s.Model)
			o.Timeout = s.Timeout
			b = o
		}
	case KindClaude:
		if env(AnthropicKeyEnv) == "" && env("ANTHROPIC_AUTH_TOKEN") == "" {
			return nil, fmt.Errorf("model: claude needs %s (or ANTHROPIC_AUTH_TOKEN) in the environment", AnthropicKeyEnv)
		}
		c := NewClaudeCLI(s.Binary, s.Model)
		c.Timeout, c.Lookup = s.Timeout, lookup
		b = c
	default:
		return nil, fmt.Errorf("model: unknown backend kind %q (want %s, %s or %s)", s.Kind, KindAnthropic, KindOpenAI, KindClaude)
	}
	return WithRetry(b, attempts, backoff), nil
}
