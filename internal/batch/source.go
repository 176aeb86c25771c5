package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// Limits on a batch source.
const (
	MaxItems    = 1000 // findings in one batch
	maxDirFiles = 1000 // files read from a directory source
)

// ErrSource wraps every reason a batch source cannot be read.
var ErrSource = errors.New("bad batch source")

// Reader is one file format a batch source may be in: it answers ok=false
// for a file that is not its format, and an error for one that is but is
// broken. ReadSource tries Readers in order, so a new intake format (SARIF
// from any scanner) is one entry here, and every command that reads a
// source (run --batch, scan --from) takes it at once.
type Reader struct {
	Name string
	Read func(name string, data []byte, in Intake) (items []Item, ok bool, err error)
}

// Splitter writes one finding of a many-finding file to a file of its
// own (a run reads one finding), returning its path.
type Splitter func(id string, data []byte) (string, error)

// Intake is what readers need of the caller: where split files go, and
// how a SARIF log is sorted (nil: a SARIF source is refused).
type Intake struct {
	Split Splitter
	SARIF SARIFSorter
}

// Readers are the formats, tried in order: fixrail scan's JSON, a
// vulnerable-dependency file (fixrail's finding list, osv-scanner JSON or
// SARIF, one Dependabot alert), any other scanner's SARIF log, then a
// report (JSON or Markdown).
var Readers = []Reader{
	{Name: "scan", Read: readScan},
	{Name: "vuln", Read: readVulns},
	{Name: "sarif", Read: readSARIF},
	{Name: "report", Read: readReport},
}

// ReadSource reads a batch source: a file in any Readers format, or a
// directory whose regular files (not recursing, hidden files skipped) are
// each one. One-finding files split from a list are written through
// in.Split; a SARIF log is sorted by in.SARIF.
func ReadSource(path string, in Intake) ([]Item, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSource, err)
	}
	var files []string
	switch {
	case fi.IsDir():
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSource, err)
		}
		for _, e := range ents {
			// Only regular files: a link could point anywhere.
			if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
				continue
			}
			files = append(files, filepath.Join(path, e.Name()))
		}
		if len(files) > maxDirFiles {
			return nil, fmt.Errorf("%w: %s holds %d files (at most %d)", ErrSource, path, len(files), maxDirFiles)
		}
		slices.Sort(files)
	case fi.Mode().IsRegular():
		files = []string{path}
	default:
		return nil, fmt.Errorf("%w: %s is neither a regular file nor a directory", ErrSource, path)
	}
	var items []Item
	for _, f := range files {
		its, err := readFile(f, in)
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
		if len(items) > MaxItems {
			return nil, fmt.Errorf("%w: over %d findings; split the batch", ErrSource, MaxItems)
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: %s holds no finding to run", ErrSource, path)
	}
	// One finding twice runs twice, in sequence: the second meets the
	// first's branch (HALT in-flight), never a race on one lock.
	for i := range items {
		items[i].Keys = append(items[i].Keys, "finding:"+items[i].ID)
	}
	return items, nil
}

func readFile(path string, in Intake) ([]Item, error) {
	data, err := pathguard.ReadRegular(path, findings.MaxVulnFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSource, path, err)
	}
	for _, r := range Readers {
		items, ok, err := r.Read(path, data, in)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (%s): %w", ErrSource, path, r.Name, err)
		}
		if ok {
			return items, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is in no format a batch reads", ErrSource, path)
}

// ScanItem is the part of one `fixrail scan --json` item a batch reads.
type ScanItem struct {
	Group   string `json:"group"`
	Finding string `json:"finding"`
	Kind    string `json:"kind"`
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Why     string `json:"why"`
	Path    string `json:"path"`
}

// scanDoc is `fixrail scan --json`: one repository's, or with --repos an
// array of them.
type scanDoc struct {
	Repo string `json:"repo"`
	// SARIF is the log a scan --sarif read (its kind-sarif items' ids are
	// that log's results).
	SARIF string     `json:"sarif"`
	Base  string     `json:"base"`
	Items []ScanItem `json:"items"`
}

// readScan takes a scan's to-fix items: GitHub issues and Dependabot
// alerts, each run by number on its repository, and a SARIF log's
// results, each run by id from the log in the local repository. The
// other groups are work a run would refuse (branch-exists, unfixable) or
// no finding at all; a SARIF log's unfixable and posture results are
// listed with their reason.
func readScan(name string, data []byte, _ Intake) ([]Item, bool, error) {
	trim := bytes.TrimSpace(data)
	var docs []scanDoc
	switch {
	case bytes.HasPrefix(trim, []byte("{")):
		var d scanDoc
		var probe map[string]json.RawMessage
		if json.Unmarshal(trim, &probe) != nil {
			return nil, false, nil
		}
		if _, ok := probe["items"]; !ok {
			return nil, false, nil
		}
		_, repo := probe["repo"]
		_, log := probe["sarif"]
		if !repo && !log {
			return nil, false, nil
		}
		if err := json.Unmarshal(trim, &d); err != nil {
			return nil, true, err
		}
		docs = []scanDoc{d}
	case bytes.HasPrefix(trim, []byte("[")):
		var probe []map[string]json.RawMessage
		if json.Unmarshal(trim, &probe) != nil || len(probe) == 0 {
			return nil, false, nil
		}
		if _, ok := probe[0]["items"]; !ok {
			return nil, false, nil
		}
		if err := json.Unmarshal(trim, &docs); err != nil {
			return nil, true, err
		}
	default:
		return nil, false, nil
	}
	var out []Item
	for _, d := range docs {
		if (d.Repo != "" || d.SARIF == "") && !validRepo(d.Repo) {
			return nil, true, fmt.Errorf("repo %q is not owner/name", d.Repo)
		}
		// GitHub's names are one repository in any case: "O/R" and "o/r"
		// are one clone, one ledger and one set of keys, never two.
		d.Repo = strings.ToLower(d.Repo)
		if d.Base != "" && !validBranch(d.Base) {
			return nil, true, fmt.Errorf("base %q is not a branch name", d.Base)
		}
		for _, it := range d.Items {
			if it.Kind == "sarif" {
				sit, err := scanSARIFItem(name, d, it)
				if err != nil {
					return nil, true, err
				}
				out = append(out, sit...)
				continue
			}
			if it.Group != "to-fix" {
				continue
			}
			var id string
			switch it.Kind {
			case "issue":
				id = findings.FindingID(it.Number)
			case "alert":
				id = findings.AlertID(it.Number)
			default:
				continue // a repository fact, not a finding
			}
			if d.Repo == "" {
				return nil, true, fmt.Errorf("item %q: the listing names no repository", it.Finding)
			}
			if it.Number <= 0 || it.Finding != id {
				return nil, true, fmt.Errorf("item %q: kind %s number %d do not name it", it.Finding, it.Kind, it.Number)
			}
			item := Item{ID: id, Title: it.Title, Kind: it.Kind, File: strconv.Itoa(it.Number), Repo: d.Repo, Base: d.Base}
			if it.Kind == "alert" {
				item.Keys = []string{dependabotKey}
			}
			out = append(out, item)
		}
	}
	return out, true, nil
}

// validRepo is owner/name in GitHub's alphabet: it becomes an argument
// and a directory name.
func validRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && pathguard.SafeName(owner) && pathguard.SafeName(name) && !strings.HasPrefix(owner, "-") && !strings.HasPrefix(name, "-") && name != "." && name != ".."
}

// validBranch is a branch name as git allows it, within a conservative
// alphabet: it becomes an argument.
func validBranch(s string) bool {
	if s == "" || len(s) > 255 || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "@{") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-", r)) {
			return false
		}
	}
	return true
}

// readVulns takes a vulnerable-dependency file, one item per package,
// each split to a file of fixrail's finding JSON. Two findings on one
// manifest, or on one package, share a key: they run in sequence.
func readVulns(_ string, data []byte, in Intake) ([]Item, bool, error) {
	vs, err := findings.ParseVuln(data)
	if err != nil {
		return nil, false, nil // not this format; the report reader says why
	}
	var out []Item
	for _, v := range vs {
		one, err := json.Marshal([]map[string]any{{
			"id": v.ID, "ecosystem": v.Ecosystem, "package": v.Package, "version": v.Version,
			"advisories": v.Advisories, "manifest": v.Manifest,
		}})
		if err != nil {
			return nil, true, err
		}
		file, err := in.Split(v.ID, one)
		if err != nil {
			return nil, true, err
		}
		out = append(out, Item{ID: v.ID, Title: v.Package + " " + v.Version + " (" + v.Ecosystem + ")", Kind: "vuln", File: file,
			Keys: vulnKeys(v)})
	}
	return out, true, nil
}

// readReport takes a report file as it is: one finding, its file the
// source's own. Its evidence's path and manifest are its keys, and a cve
// report's package too, as a vulnerable-dependency list's (vulnKeys): a
// report with no manifest hint still runs after any other finding on its
// package. A key the run would refuse (a manifest into .git, an escape)
// is left out: the run refuses the report, touching nothing.
func readReport(name string, data []byte, _ Intake) ([]Item, bool, error) {
	f, err := findings.Parse(filepath.Base(name), data)
	if err != nil {
		return nil, true, err
	}
	it := Item{ID: f.ID, Title: f.Title, Kind: "report", File: name}
	if e := f.Evidence; e != nil {
		if e.Path != "" {
			if k, err := pathKey("file", e.Path); err == nil {
				it.Keys = append(it.Keys, k)
			}
		}
		if f.Type() == findings.VulnFixType {
			if v, err := findings.VulnOf(f); err == nil {
				it.Keys = append(it.Keys, vulnKeys(v)...)
			}
		} else if e.Manifest != "" {
			if k, err := pathKey("manifest", e.Manifest); err == nil {
				it.Keys = append(it.Keys, k)
			}
		}
	}
	return []Item{it}, true, nil
}

// packageKey is a package's key as its run will know it: the ecosystem by
// its OSV name and the name as the manifest reader compares it (PEP 503 for
// PyPI), so "pypi/Django" and "PyPI/django" — one package, whose run may
// edit any manifest declaring it — are one key and never run at once.
func packageKey(eco, name string) string {
	if e, err := vulndata.ParseEcosystem(eco); err == nil {
		eco, name = string(e), e.NormalizeName(name)
	}
	return "package:" + eco + "/" + name
}
