package cli

import (
	"crypto/hmac"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/events"
	"github.com/rogpeppe/go-internal/testscript"
)

// webhookrecv start|down [STATUS]: a webhook receiver for the scenario.
// start listens on loopback and answers STATUS (default 204); each request
// is kept as $WORK/webhook/NNN.json, and its signature is checked against
// $FIXRAIL_WEBHOOK_SECRET as a receiver would (constant time, over the raw
// body): a bad one is $WORK/webhook/NNN.badsig. down points the URL at a
// closed port. Both set FIXRAIL_WEBHOOK_URL and FIXRAIL_WEBHOOK_SECRET (a
// synthetic key assembled here).
func cmdWebhookRecv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 || (args[0] != "start" && args[0] != "down") {
		ts.Fatalf("usage: webhookrecv start [STATUS] | down")
	}
	secret := "whsec" + "_" + strings.Repeat("scenario", 3)
	ts.Setenv(events.WebhookSecretEnv, secret)
	if args[0] == "down" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		url := "http://" + ln.Addr().String() + "/hook"
		ln.Close()
		ts.Setenv(events.WebhookURLEnv, url)
		return
	}
	status := http.StatusNoContent
	if len(args) > 1 {
		_, err := fmt.Sscan(args[1], &status)
		ts.Check(err)
	}
	dir := ts.MkAbs("webhook")
	ts.Check(os.MkdirAll(dir, 0o755))
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		name := filepath.Join(dir, fmt.Sprintf("%03d", n))
		mu.Unlock()
		os.WriteFile(name+".json", body, 0o644)
		if !hmac.Equal([]byte(r.Header.Get(events.WebhookSignatureHeader)), []byte(events.Sign([]byte(secret), body))) {
			os.WriteFile(name+".badsig", nil, 0o644)
		}
		w.WriteHeader(status)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(events.WebhookURLEnv, srv.URL+"/hook")
}

// gitserverurl: set GITHUB_SERVER_URL to the server gitserve started (its
// $GITURL without the owner/name path), as Actions sets it for a clone.
func cmdGitServerURL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: gitserverurl")
	}
	u := ts.Getenv("GITURL")
	for range 2 {
		u = u[:strings.LastIndex(u, "/")]
	}
	ts.Setenv("GITHUB_SERVER_URL", u)
}
