package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxReply bounds a reply body read from a model API; maxErrorText bounds how
// much of an error reply goes into the error.
const (
	maxReply     = 8 << 20
	maxErrorText = 512
)

// postJSON POSTs in as JSON to url with the headers h, within d, and decodes
// a 2xx reply into out. Every failure goes through classify: a status that
// is worth retrying, a timeout or a broken connection is a TransportError.
func postJSON(ctx context.Context, hc *http.Client, backend, url string, h http.Header, d time.Duration, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: %w", backend, err)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", backend, err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return classify(backend, 0, err)
	}
	defer res.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(res.Body, maxReply+1))
	if err != nil {
		return classify(backend, 0, err)
	}
	if len(rb) > maxReply {
		return fmt.Errorf("%s: reply larger than %d bytes", backend, maxReply)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		text := strings.ToValidUTF8(string(rb[:min(len(rb), maxErrorText)]), "\uFFFD")
		return classify(backend, res.StatusCode, fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(text)))
	}
	if err := json.Unmarshal(rb, out); err != nil {
		return fmt.Errorf("%s: decode reply: %w", backend, err)
	}
	return nil
}

// httpClient is the transport both API backends use: explicit connection
// timeouts, so a dead endpoint fails fast as a TransportError (the whole
// request is bounded per call by the backend's Timeout), and no redirects:
// a redirect would carry the API key header to wherever it points.
func httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ExpectContinueTimeout = time.Second
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
