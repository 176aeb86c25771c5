package batch

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// SARIFSorter sorts a SARIF log's results as `run --sarif` does: against
// the repository the batch runs in (paths against its work tree, files
// read from its base commit, fixrail.yaml's scanners: on the base). The
// batch and each run it starts sort the same log the same way, so a
// result's id here is the one its run finds.
type SARIFSorter func(name string, data []byte) (*findings.SARIFScan, error)

// readSARIF takes a scanner's SARIF log (osv-scanner's is the vuln
// reader's): each result sorted to-fix runs as `run --sarif FILE --result
// ID`, keyed by its file; an unfixable or posture one is listed with its
// reason and never run.
func readSARIF(name string, data []byte, in Intake) ([]Item, bool, error) {
	var probe struct {
		Version *string           `json:"version"`
		Runs    []json.RawMessage `json:"runs"`
	}
	trim := bytes.TrimSpace(data)
	if !bytes.HasPrefix(trim, []byte("{")) || json.Unmarshal(trim, &probe) != nil || probe.Version == nil || probe.Runs == nil {
		return nil, false, nil
	}
	if in.SARIF == nil {
		return nil, true, fmt.Errorf("a SARIF log is sorted against the repository the batch runs in; none here")
	}
	scan, err := in.SARIF(name, data)
	if err != nil {
		return nil, true, err
	}
	var out []Item
	for _, r := range scan.Results {
		it := Item{ID: r.ID, Kind: "sarif", File: name}
		if r.Finding != nil {
			it.Title = r.Finding.Title
		}
		switch r.Group {
		case findings.GroupToFix:
			if r.Finding == nil || !pathguard.SafeName(r.ID) {
				return nil, true, fmt.Errorf("result %q: a to-fix result with no finding or an unsafe id", r.ID)
			}
			if e := r.Finding.Evidence; e != nil && e.Path != "" {
				k, err := pathKey("file", e.Path)
				if err != nil {
					return nil, true, fmt.Errorf("result %q: %v", r.ID, err)
				}
				it.Keys = []string{k}
			}
		default:
			it.Listed, it.Why = r.Group, r.Why
		}
		out = append(out, it)
	}
	return out, true, nil
}

// scanSARIFItem is a scan's kind-sarif item of the listing file listing:
// a to-fix one runs from the log the scan read (listingLog: beside the
// listing), keyed by its file; an unfixable or posture one is listed.
func scanSARIFItem(listing string, d scanDoc, it ScanItem) ([]Item, error) {
	out := Item{ID: it.Finding, Title: it.Title, Kind: "sarif", Base: d.Base}
	switch it.Group {
	case findings.GroupToFix:
		if d.SARIF == "" {
			return nil, fmt.Errorf("item %q: the listing names no SARIF log (scan --sarif records it)", it.Finding)
		}
		if !pathguard.SafeName(it.Finding) {
			return nil, fmt.Errorf("item %q is not a result id", it.Finding)
		}
		log, err := listingLog(listing, d.SARIF)
		if err != nil {
			return nil, fmt.Errorf("item %q: %w", it.Finding, err)
		}
		out.File = log
		// The file is the run's key: a to-fix result always has one (scan
		// lists one without a file as unfixable), and one the listing
		// leaves out, or spells another way, must not let two runs on one
		// file start together.
		if it.Path == "" {
			return nil, fmt.Errorf("item %q: a to-fix SARIF item names no file (its path)", it.Finding)
		}
		k, err := pathKey("file", it.Path)
		if err != nil {
			return nil, fmt.Errorf("item %q: %w", it.Finding, err)
		}
		out.Keys = []string{k}
	case findings.GroupUnfixable, findings.GroupPosture:
		out.Listed, out.Why = it.Group, it.Why
	default:
		return nil, nil // branch-exists: work awaiting review, as for issues
	}
	return []Item{out}, nil
}
