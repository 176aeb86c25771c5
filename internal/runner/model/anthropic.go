package model

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// DefaultAnthropicURL is the Messages API's base URL.
const DefaultAnthropicURL = "https://api.anthropic.com/"

// Anthropic calls the Anthropic Messages API through the official Go SDK:
// one non-streaming request, no tools, no SDK-internal retries.
type Anthropic struct {
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration

	model  string
	client anthropic.Client
}

// NewAnthropic returns a backend for model at baseURL (DefaultAnthropicURL
// when empty). apiKey is the caller's to read from the environment; the SDK
// is told to read nothing from it, nor from any profile on disk.
func NewAnthropic(apiKey, baseURL, model string) *Anthropic {
	if baseURL == "" {
		baseURL = DefaultAnthropicURL
	}
	return &Anthropic{
		model: model,
		client: anthropic.NewClient(
			option.WithoutEnvironmentDefaults(),
			option.WithAPIKey(apiKey),
			option.WithBaseURL(baseURL),
			option.WithHTTPClient(httpClient()),
			// WithRetry decides what is retried, by type.
			option.WithMaxRetries(0),
		),
	}
}

// Complete sends one message and returns the text of the reply.
func (a *Anthropic) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(a.model),
		MaxTokens: int64(maxTokens),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	}
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	msg, err := a.client.Messages.New(ctx, params, option.WithRequestTimeout(timeout(a.Timeout)))
	if err != nil {
		var apiErr *anthropic.Error
		status := 0
		if errors.As(err, &apiErr) {
			status = apiErr.StatusCode
		}
		return "", classify("anthropic", status, err)
	}
	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	if text.Len() == 0 {
		return "", errors.New("anthropic: reply has no text (stop reason " + string(msg.StopReason) + ")")
	}
	return text.String(), nil
}

func timeout(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTimeout
	}
	return d
}

// httpClient is the transport both SDK backends use: explicit connection
// timeouts, so a dead endpoint fails fast as a TransportError; the whole
// request is bounded per call by the backend's Timeout.
func httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ExpectContinueTimeout = time.Second
	return &http.Client{Transport: t}
}
