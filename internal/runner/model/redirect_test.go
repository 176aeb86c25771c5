package model_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/fixrail/fixrail/internal/runner/model"
)

// TestNoRedirectCarriesTheKey: an endpoint that answers with a redirect gets
// an error back, and the server it points to is never called, since a
// redirect would send the API key header (X-Api-Key, Authorization) along.
func TestNoRedirectCarriesTheKey(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		t.Errorf("redirect followed: %s %s with headers %v", r.Method, r.URL.Path, r.Header)
	}))
	defer other.Close()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	for name, b := range map[string]model.Backend{
		"anthropic": model.NewAnthropic("secret-key", srv.URL, "m"),
		"openai":    model.NewOpenAI("secret-key", srv.URL+"/v1", "m"),
	} {
		if _, err := b.Complete(t.Context(), "", "hi", 16); err == nil {
			t.Errorf("%s: a redirect reply was taken as an answer", name)
		}
	}
	if asked.Load() != 2 || elsewhere.Load() != 0 {
		t.Errorf("endpoint asked %d times (want 2), redirect target %d (want 0)", asked.Load(), elsewhere.Load())
	}
}
