//go:build race

package policy

// raceBuild: the race detector slows the analyser 10–50×, so hang guards
// allow more time; they catch a hang, never measure speed.
const raceBuild = true
