package cli

import (
	"strconv"
	"strings"
	"sync"

	"github.com/fixrail/fixrail/internal/orca/orcatest"
	"github.com/rogpeppe/go-internal/testscript"
)

var orcaFakes sync.Map // *testscript.TestScript → *orcaFake

type orcaFake struct {
	tb  *scriptTB
	srv *orcatest.Server
}

// orcafake start | on REPO START STATUS BODYFILE | alert REPO ID STATUS BODYFILE | verify
//
// start runs the strict Orca stand-in (orcatest), sets ORCA_API_TOKEN and
// writes its URL to $ORCA_URL for fixrail.yaml; on expects one alerts
// query (the list, from START); alert one query for alert ID; verify fails the script on any unexpected query and any expected
// one never made.
func cmdOrcaFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: orcafake start|on|verify")
	}
	if args[0] == "start" {
		tb := &scriptTB{}
		f := &orcaFake{tb: tb, srv: orcatest.New(tb)}
		orcaFakes.Store(ts, f)
		ts.Defer(func() {
			for _, c := range tb.cleanups {
				c()
			}
			tb.cleanups = nil
			orcaFakes.Delete(ts)
		})
		ts.Setenv("ORCA_API_TOKEN", orcatest.Token)
		ts.Setenv("ORCA_URL", f.srv.URL())
		return
	}
	v, ok := orcaFakes.Load(ts)
	if !ok {
		ts.Fatalf("orcafake %s before orcafake start", args[0])
	}
	f := v.(*orcaFake)
	switch args[0] {
	case "on":
		if len(args) != 5 {
			ts.Fatalf("usage: orcafake on REPO START STATUS BODYFILE")
		}
		start, err := strconv.Atoi(args[2])
		ts.Check(err)
		status, err := strconv.Atoi(args[3])
		ts.Check(err)
		f.srv.OnAlerts(args[1], start, status, strings.TrimSpace(ts.ReadFile(args[4])))
	case "alert":
		if len(args) != 5 {
			ts.Fatalf("usage: orcafake alert REPO ID STATUS BODYFILE")
		}
		status, err := strconv.Atoi(args[3])
		ts.Check(err)
		f.srv.OnAlert(args[1], args[2], status, strings.TrimSpace(ts.ReadFile(args[4])))
	case "verify":
		for _, c := range f.tb.cleanups {
			c()
		}
		f.tb.cleanups = nil
		f.tb.mu.Lock()
		errs := f.tb.errs
		f.tb.mu.Unlock()
		if len(errs) > 0 {
			ts.Fatalf("the Orca stand-in:\n%s", strings.Join(errs, "\n"))
		}
	default:
		ts.Fatalf("orcafake: unknown subcommand %q", args[0])
	}
}
