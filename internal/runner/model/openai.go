package model

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// DefaultOpenAIURL is OpenAI's base URL; any OpenAI-compatible endpoint's
// base URL (ending in /v1) can replace it.
const DefaultOpenAIURL = "https://api.openai.com/v1/"

// OpenAI calls an OpenAI-compatible chat-completions endpoint (POST
// {base}/chat/completions) over net/http: one request, no tools, no retries
// of its own.
type OpenAI struct {
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration

	model, apiKey, baseURL string
	hc                     *http.Client
}

// NewOpenAI returns a backend for model at baseURL (DefaultOpenAIURL when
// empty). apiKey is the caller's to read from the environment; no OPENAI_*
// variable (base URL, organization, project, headers) is read here.
func NewOpenAI(apiKey, baseURL, model string) *OpenAI {
	if baseURL == "" {
		baseURL = DefaultOpenAIURL
	}
	return &OpenAI{model: model, apiKey: apiKey, baseURL: strings.TrimSuffix(baseURL, "/"), hc: httpClient()}
}

// Complete sends one chat completion and returns the first choice's text.
func (o *OpenAI) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var msgs []message
	if system != "" {
		msgs = append(msgs, message{Role: "system", Content: system})
	}
	msgs = append(msgs, message{Role: "user", Content: prompt})
	req := struct {
		Model               string    `json:"model"`
		Messages            []message `json:"messages"`
		MaxCompletionTokens int       `json:"max_completion_tokens"`
	}{Model: o.model, Messages: msgs, MaxCompletionTokens: maxTokens}
	var res struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
				Refusal string `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	h := http.Header{"Authorization": {"Bearer " + o.apiKey}}
	if err := postJSON(ctx, o.hc, "openai", o.baseURL+"/chat/completions", h, timeout(o.Timeout), req, &res); err != nil {
		return "", err
	}
	if len(res.Choices) == 0 {
		return "", errors.New("openai: reply has no choices")
	}
	c := res.Choices[0]
	if c.Message.Content == "" {
		if c.Message.Refusal != "" {
			return "", errors.New("openai: the model refused: " + c.Message.Refusal)
		}
		return "", errors.New("openai: reply has no text (finish reason " + c.FinishReason + ")")
	}
	return c.Message.Content, nil
}
