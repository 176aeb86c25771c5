package model

import (
	"context"
	"errors"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// DefaultOpenAIURL is OpenAI's base URL; any OpenAI-compatible endpoint's
// base URL (ending in /v1) can replace it.
const DefaultOpenAIURL = "https://api.openai.com/v1/"

// OpenAI calls an OpenAI-compatible chat-completions endpoint through the
// official Go SDK: one request, no tools, no SDK-internal retries.
type OpenAI struct {
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration

	model string
	chat  openai.ChatCompletionService
}

// NewOpenAI returns a backend for model at baseURL (DefaultOpenAIURL when
// empty). apiKey is the caller's to read from the environment. The service
// is built without the SDK's client defaults, which would read OPENAI_*
// variables (base URL, organization, project, custom headers) on their own.
func NewOpenAI(apiKey, baseURL, model string) *OpenAI {
	if baseURL == "" {
		baseURL = DefaultOpenAIURL
	}
	return &OpenAI{
		model: model,
		chat: openai.NewChatCompletionService(
			option.WithHTTPClient(httpClient()),
			option.WithBaseURL(baseURL),
			option.WithAPIKey(apiKey),
			// WithRetry decides what is retried, by type.
			option.WithMaxRetries(0),
		),
	}
}

// Complete sends one chat completion and returns the first choice's text.
func (o *OpenAI) Complete(ctx context.Context, system, prompt string, maxTokens int) (string, error) {
	var msgs []openai.ChatCompletionMessageParamUnion
	if system != "" {
		msgs = append(msgs, openai.SystemMessage(system))
	}
	msgs = append(msgs, openai.UserMessage(prompt))
	res, err := o.chat.New(ctx, openai.ChatCompletionNewParams{
		Model:               o.model,
		Messages:            msgs,
		MaxCompletionTokens: openai.Int(int64(maxTokens)),
	}, option.WithRequestTimeout(timeout(o.Timeout)))
	if err != nil {
		var apiErr *openai.Error
		status := 0
		if errors.As(err, &apiErr) {
			status = apiErr.StatusCode
		}
		return "", classify("openai", status, err)
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
