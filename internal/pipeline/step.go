package pipeline

import (
	"strings"

	"github.com/fixrail/fixrail/internal/untrusted"
)

// step marks the start of something that may run for minutes — an agent
// invocation, a command, a checkout, the wait for CI — and returns what
// ends it: on a plain console (a CI log) a line every heartbeat interval
// says it is still running (events.Log.Step). The name may quote a
// command line with an agent-chosen path in it: it is escaped here, and
// redacted with every console line.
func (r *run) step(name string) (end func()) {
	return r.log.Step(untrusted.OneLine(name))
}

// maxStepName bounds a command line quoted in a heartbeat.
const maxStepName = 120

// commandStep names a command for a heartbeat: its argv, shortened.
func commandStep(argv []string) string {
	s := strings.Join(argv, " ")
	if len(s) > maxStepName {
		s = strings.ToValidUTF8(s[:maxStepName], "") + "…"
	}
	return "`" + s + "`"
}
