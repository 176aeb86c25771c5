package model

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// DefaultAnthropicURL is the Messages API's base URL.
const DefaultAnthropicURL = "https://api.anthropic.com/"

// anthropicVersion is the Messages API version header every request sends.
const anthropicVersion = "2023-06-01"

// Anthropic calls the Anthropic Messages API (POST /v1/messages) over
// net/http: one non-streaming request, no tools, no retries of its own.
type Anthropic struct {
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration

	model, apiKey, baseURL string
	hc                     *http.Client
}

// NewAnthropic returns a backend for model at baseURL (DefaultAnthropicURL
// when empty). apiKey is the caller's to read from the environment; nothing
// here reads the environment or any profile on disk.
func NewAnthropic(apiKey, baseURL, model string) *Anthropic {
	if baseURL == "" {
		baseURL = DefaultAnthropicURL
	}
	return &Anthropic{model: model, apiKey: apiKey, baseURL: strings.TrimSuffix(baseURL, "/"), hc: httpClient()}
}

// anthropicBlock is a text content block, in a request or a reply.
type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Complete sends one message and returns the text of the reply.
func (a *Anthropic) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	type message struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	}
	req := struct {
		Model     string           `json:"model"`
		MaxTokens int              `json:"max_tokens"`
		System    []anthropicBlock `json:"system,omitempty"`
		Messages  []message        `json:"messages"`
	}{Model: a.model, MaxTokens: maxTokens, Messages: []message{{Role: "user", Content: []anthropicBlock{{Type: "text", Text: prompt}}}}}
	if system != "" {
		req.System = []anthropicBlock{{Type: "text", Text: system}}
	}
	var res struct {
		Content    []anthropicBlock `json:"content"`
		StopReason string           `json:"stop_reason"`
	}
	h := http.Header{"X-Api-Key": {a.apiKey}, "Anthropic-Version": {anthropicVersion}}
	if err := postJSON(ctx, a.hc, "anthropic", a.baseURL+"/v1/messages", h, timeout(a.Timeout), req, &res); err != nil {
		return "", err
	}
	var text strings.Builder
	for _, b := range res.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	if text.Len() == 0 {
		return "", errors.New("anthropic: reply has no text (stop reason " + res.StopReason + ")")
	}
	return text.String(), nil
}

func timeout(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTimeout
	}
	return d
}
