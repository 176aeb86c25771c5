// Package examples bundles the demo project that `fixrail demo` runs the
// pipeline on: a small Python library with a real bug, a bug report about
// it, and a scripted agent that stands in for a model.
package examples

import "embed"

// FS holds textfmt/: repo/ (the project, with fixrail.yaml), report.json and
// agent/scripted_agent.py.
//
//go:embed all:textfmt
var FS embed.FS
