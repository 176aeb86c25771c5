package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/testscript"
)

// listeners are the scenario's listeners by name, per script.
var listeners sync.Map // *testscript.TestScript+name -> *atomic.Int64

// listener NAME [BYTES]: an HTTP server on the host's loopback that
// counts the connections it accepts and answers "hello from NAME" (or
// BYTES zero bytes): a model API to allow, or the place an agent must not
// reach. Its port is in $NAME_PORT (NAME upper-cased) and in
// $WORK/agent/NAME.port, where the scenario agent reads it.
func cmdListener(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: listener NAME [BYTES]")
	}
	name, size := args[0], 0
	if len(args) == 2 {
		var err error
		if size, err = strconv.Atoi(args[1]); err != nil {
			ts.Fatalf("listener: %v", err)
		}
	}
	seen := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if size > 0 {
			_, _ = w.Write(make([]byte, size))
			return
		}
		fmt.Fprintf(w, "hello from %s", name)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			seen.Add(1)
		}
	}
	srv.Start()
	ts.Defer(srv.Close)
	listeners.Store(listenerKey(ts, name), seen)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	ts.Setenv(strings.ToUpper(name)+"_PORT", port)
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("WORK"), "agent", name+".port"), []byte(port), 0o644))
}

// listener-seen NAME N: the listener NAME accepted exactly N connections.
func cmdListenerSeen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: listener-seen NAME N")
	}
	v, ok := listeners.Load(listenerKey(ts, args[0]))
	if !ok {
		ts.Fatalf("listener-seen: no listener %s", args[0])
	}
	if got := strconv.FormatInt(v.(*atomic.Int64).Load(), 10); got != args[1] {
		ts.Fatalf("listener %s accepted %s connection(s), want %s", args[0], got, args[1])
	}
}

func listenerKey(ts *testscript.TestScript, name string) string {
	return fmt.Sprintf("%p/%s", ts, name)
}
