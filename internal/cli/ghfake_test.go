package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptTB is the testing.TB a githubtest fake reports to inside a
// scenario: it collects what the fake finds wrong, and `ghfake verify`
// fails the script with it. Only the methods githubtest calls are here;
// the embedded interface is nil.
type scriptTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (s *scriptTB) Helper() {}
func (s *scriptTB) Errorf(f string, a ...any) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Sprintf(f, a...))
	s.mu.Unlock()
}
func (s *scriptTB) Fatalf(f string, a ...any) { s.Errorf(f, a...) }
func (s *scriptTB) Cleanup(fn func())         { s.cleanups = append(s.cleanups, fn) }

type ghFake struct {
	tb  *scriptTB
	srv *githubtest.Server
}

var ghFakes sync.Map // *testscript.TestScript → *ghFake

// ghfake start | on METHOD PATH STATUS BODYFILE [times=N|any] [query=K=V] [header=K:V] [draft] | called METHOD PATH | body METHOD PATH FILE | verify
//
// start runs a strict fake GitHub (githubtest) for the scenario and points
// fixrail at it (FIXRAIL_GITHUB_API_URL, FIXRAIL_GITHUB_TOKEN); on expects
// one request (PATH may hold {sha}); draft also requires the request body
// to ask for a draft; called asserts a request was (or with !, was not)
// made; body writes the last such request's body to FILE; verify stops the fake and fails on any unexpected request, any
// expected one never made and any forbidden one (merge, ready, refs).
func cmdGHFake(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: ghfake start|on|called|verify")
	}
	if args[0] == "start" {
		tb := &scriptTB{}
		f := &ghFake{tb: tb, srv: githubtest.New(tb)}
		ghFakes.Store(ts, f)
		ts.Defer(func() {
			for _, c := range tb.cleanups {
				c()
			}
			tb.cleanups = nil
			ghFakes.Delete(ts)
		})
		ts.Setenv("FIXRAIL_GITHUB_API_URL", f.srv.URL())
		ts.Setenv("FIXRAIL_GITHUB_TOKEN", githubtest.Token)
		return
	}
	v, ok := ghFakes.Load(ts)
	if !ok {
		ts.Fatalf("ghfake %s before ghfake start", args[0])
	}
	f := v.(*ghFake)
	switch args[0] {
	case "on":
		if neg || len(args) < 5 {
			ts.Fatalf("usage: ghfake on METHOD PATH STATUS BODYFILE [times=N|any] [query=K=V] [header=K:V] [draft]")
		}
		status, err := strconv.Atoi(args[3])
		ts.Check(err)
		e := f.srv.On(args[1], args[2]).Reply(status, strings.TrimSpace(ts.ReadFile(args[4])))
		for _, opt := range args[5:] {
			k, val, _ := strings.Cut(opt, "=")
			switch k {
			case "times":
				if val == "any" {
					e.AnyTimes()
					continue
				}
				n, err := strconv.Atoi(val)
				ts.Check(err)
				e.Times(n)
			case "query":
				qk, qv, _ := strings.Cut(val, "=")
				e.Query(qk, qv)
			case "header":
				hk, hv, _ := strings.Cut(val, ":")
				e.Header(hk, hv)
			case "draft":
				e.Check(func(t testing.TB, body []byte) {
					var req struct {
						Draft *bool `json:"draft"`
					}
					if json.Unmarshal(body, &req) != nil || req.Draft == nil || !*req.Draft {
						t.Errorf("githubtest: %s %s without draft: true: %s", args[1], args[2], body)
					}
				})
			default:
				ts.Fatalf("ghfake on: unknown option %q", opt)
			}
		}
	case "called":
		if len(args) != 3 {
			ts.Fatalf("usage: ghfake called METHOD PATH")
		}
		n := f.srv.Count(args[1], args[2])
		if neg && n > 0 {
			ts.Fatalf("%s %s was requested %d time(s)", args[1], args[2], n)
		}
		if !neg && n == 0 {
			ts.Fatalf("%s %s was never requested", args[1], args[2])
		}
	case "body":
		// ghfake body METHOD PATH FILE: the last such request's body, to
		// FILE, for the script to read (a notice as posted).
		if neg || len(args) != 4 {
			ts.Fatalf("usage: ghfake body METHOD PATH FILE")
		}
		var body []byte
		found := false
		for _, c := range f.srv.Calls() {
			if c.Method == args[1] && c.Path == args[2] {
				body, found = c.Body, true
			}
		}
		if !found {
			ts.Fatalf("%s %s was never requested", args[1], args[2])
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[3]), body, 0o644))
	case "verify":
		for _, c := range f.tb.cleanups {
			c()
		}
		f.tb.cleanups = nil
		for _, c := range f.srv.Calls() {
			if why := githubtest.Forbidden(c); why != "" {
				f.tb.Errorf("forbidden request %s: %s", c, why)
			}
		}
		f.tb.mu.Lock()
		errs := f.tb.errs
		f.tb.mu.Unlock()
		if len(errs) > 0 {
			ts.Fatalf("the fake GitHub:\n%s", strings.Join(errs, "\n"))
		}
	default:
		ts.Fatalf("ghfake: unknown subcommand %q", args[0])
	}
}
