// Package examples bundles the demo projects `fixrail demo` runs the
// pipeline on: a small Python library with a real bug, a bug report about
// it, and a scripted agent that stands in for a model (textfmt); and a Go
// program on a vulnerable module with its alert, a file:// module proxy
// and the advisory cache (cve-go, `fixrail demo --cve`).
package examples

import "embed"

// FS holds textfmt/: repo/ (the project, with fixrail.yaml), report.json and
// agent/scripted_agent.py.
//
// cve-go/ holds repo.txtar, goproxy/, cache/ and finding.json; scanned/
// holds repo.txtar, sast.json and agent/scripted_agent.py (demo --sast,
// --secret).
//
//go:embed all:textfmt all:cve-go all:scanned
var FS embed.FS
