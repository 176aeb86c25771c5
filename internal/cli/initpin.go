package cli

import (
	"bytes"
	"runtime/debug"
)

// pinPlaceholder is where a reference workflow names the fixrail version
// its install step builds (FIXRAIL_VERSION).
const pinPlaceholder = "@FIXRAIL_VERSION@"

// pinWorkflow fills a reference workflow's FIXRAIL_VERSION with pin. An
// empty pin leaves FIXRAIL_VERSION empty, and the install step then stops
// the job asking for one: a workflow never installs a fixrail nobody named.
func pinWorkflow(wf []byte, pin string) []byte {
	return bytes.ReplaceAll(wf, []byte(pinPlaceholder), []byte(pin))
}

// selfPin is what this binary knows of the fixrail it is, as go install
// takes it: its module version (a release or a pseudo-version), else the
// commit it was built from, else "". A commit with uncommitted changes is
// still that commit; dirty says so, for init to warn.
func selfPin(bi *debug.BuildInfo) (pin string, dirty bool) {
	v := versionOf(bi)
	switch {
	case v.Module != "":
		return v.Module, false
	case v.Revision != "":
		return v.Revision, v.Dirty
	}
	return "", false
}
