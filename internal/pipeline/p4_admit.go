package pipeline

import (
	"fmt"
	"strings"

	"github.com/fixrail/fixrail/internal/gitx"
	"github.com/fixrail/fixrail/internal/verdict"
)

// maxCandidateBytes bounds everything the harness reads to build one
// candidate: the changed files as the fix phase left them and the base's
// versions of them, together. Two files at maxEvidenceBytes, both sides,
// fit; a fix phase that leaves more is refused before it is read, so what
// an agent leaves cannot grow fixrail's memory past a fixed multiple of
// this (the diff of the candidate is bounded by what it was built from).
const maxCandidateBytes = 4 * maxEvidenceBytes

// maxListed is how many paths a refusal names before "and N more".
const maxListed = 10

// admitted is what the pre-read listing let through: the paths to read,
// and the bytes the fix phase's side of them holds.
type admitted struct {
	paths []string
	bytes int64
}

// admit looks at every path the fix phase may have changed with lstat
// alone, before a byte of any is read: a path of a kind the harness never
// ships (a FIFO, a device, a path under a symlinked directory) or a
// symlink or git metadata outside the plan is unsafe; a path the plan
// does not name is outside the plan; a file over maxEvidenceBytes, or
// changed files over maxCandidateBytes together, are oversize. The
// outcome names the paths. Directories are skipped: git lists the files
// in them, and an ignored directory's files are neither read nor shipped.
func admit(dir string, changed []string, allowed map[string]bool) (admitted, *Outcome, string) {
	var out admitted
	var unplanned, oversize []string
	for _, p := range changed {
		info, err := gitx.Lstat(dir, p)
		if err != nil {
			return admitted{}, stop(Escalate, ReasonUnsafePath, "the fix left a path the harness will not ship: "+err.Error()), err.Error()
		}
		if info.Dir {
			continue
		}
		if !allowed[p] {
			if what := unsafeKind(p, info.Mode); what != "" {
				return admitted{}, stop(Escalate, ReasonUnsafePath, "the fix writes "+p+", which is "+what+": never shipped by the harness"), p + " is " + what
			}
			unplanned = append(unplanned, p)
			continue
		}
		if info.Size > maxEvidenceBytes {
			oversize = append(oversize, fmt.Sprintf("%s (%d bytes)", p, info.Size))
		}
		out.bytes += info.Size
		out.paths = append(out.paths, p)
	}
	if len(unplanned) > 0 {
		d := "not in PLAN.json: " + listPaths(unplanned)
		return admitted{}, stop(Escalate, verdict.ReasonDiffOutsidePlan, fmt.Sprintf("the fix phase changed %d path(s) the plan does not name, refused before any was read; %s", len(unplanned), d)), d
	}
	if len(oversize) > 0 {
		d := fmt.Sprintf("over the %d bytes the harness reads of one file: %s", maxEvidenceBytes, listPaths(oversize))
		return admitted{}, stop(Escalate, ReasonUnsafePath, "the fix left files the harness will not read, refused before any was read; "+d), d
	}
	if out.bytes > maxCandidateBytes {
		d := fmt.Sprintf("%d bytes in %d changed file(s), over the %d bytes the harness reads for one candidate: %s", out.bytes, len(out.paths), maxCandidateBytes, listPaths(out.paths))
		return admitted{}, stop(Escalate, ReasonUnsafePath, "the fix left more than the harness will read, refused before any was read; "+d), d
	}
	return out, nil, ""
}

// unsafeKind names what makes a path the harness never ships, from its
// name and lstat mode alone, or "".
func unsafeKind(p, mode string) string {
	switch {
	case mode == "120000":
		return "a symlink"
	case mode != "" && isGitMetadata(p):
		return "git metadata"
	}
	return ""
}

// listPaths names at most maxListed paths, then how many more there are.
func listPaths(paths []string) string {
	if len(paths) <= maxListed {
		return codeList(paths)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:maxListed], ", "), len(paths)-maxListed)
}
