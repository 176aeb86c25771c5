package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	ghforge "github.com/fixrail/fixrail/internal/forge/github"
	"github.com/fixrail/fixrail/internal/pathguard"
)

// scanMoreOpts are scan's many-repository and matrix flags, read here so
// scan.go only hands them on.
type scanMoreOpts struct {
	repos  string
	matrix bool
}

func (x *scanMoreOpts) flags(fs *flag.FlagSet) {
	fs.StringVar(&x.repos, "repos", "", "scan several repositories: `owner/a,owner/b`, or @FILE with one owner/name a line (# comments); --json prints an array")
	fs.BoolVar(&x.matrix, "matrix", false, "print the to-fix findings as a GitHub Actions matrix ({\"include\": [{repo, finding, kind, number}]}) on one line, exit 0")
}

// maxMatrix is GitHub Actions' limit on the jobs one matrix makes.
const maxMatrix = 256

// maxScanRepos bounds one scan: each repository is several API calls.
const maxScanRepos = 200

// readRepoList reads --repos: a comma list, or @FILE.
func readRepoList(v string) ([]string, error) {
	text := v
	if name, ok := strings.CutPrefix(v, "@"); ok {
		data, err := pathguard.ReadRegular(name, 1<<20)
		if err != nil {
			return nil, usagef("--repos %s: %v", v, err)
		}
		text = string(data)
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' }) {
		line, _, _ = strings.Cut(line, "#")
		r := strings.TrimSpace(line)
		if r == "" {
			continue
		}
		if _, _, err := ghforge.ParseRepo(r); err != nil {
			return nil, usagef("--repos: %q: %v", r, err)
		}
		if !seen[strings.ToLower(r)] {
			seen[strings.ToLower(r)] = true
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--repos names no repository")
	}
	if len(out) > maxScanRepos {
		return nil, usagef("--repos names %d repositories (at most %d a scan)", len(out), maxScanRepos)
	}
	return out, nil
}

// scanMany scans o.repo or each of --repos with one forge each and prints
// the results: the text listing per repository, a JSON array, or the
// matrix. A repository that cannot be read stops the scan (exit 1, naming
// it): a sweep must not read a partial listing as the whole.
func scanMany(ctx context.Context, stdio Stdio, o *scanOpts) error {
	repos := []string{o.repo}
	if o.x.repos != "" {
		if o.repo != "" {
			return usagef("--repo and --repos: pass one")
		}
		if o.dir != "" {
			return usagef("--dir compares one clone's rails: it goes with --repo")
		}
		var err error
		if repos, err = readRepoList(o.x.repos); err != nil {
			return err
		}
	} else if _, _, err := ghforge.ParseRepo(o.repo); err != nil {
		return usagef("--repo: %v", err)
	}
	var results []*scanResult
	for _, r := range repos {
		f, err := ghforge.FromEnv(os.LookupEnv, r, nil)
		if err != nil {
			return usagef("%v", err)
		}
		one := *o
		one.repo = r
		fmt.Fprintf(stdio.Stderr, "scan: %s\n", r)
		res, _, err := scan(ctx, f, &one, stdio.Stderr)
		if err != nil {
			return &errServiceUnavailable{fmt.Errorf("%s: %w", r, err)}
		}
		results = append(results, res)
	}
	if o.x.matrix {
		return printMatrix(stdio, results)
	}
	if o.json {
		if err := writeJSON(stdio.Stdout, results); err != nil {
			return err
		}
	} else {
		for i, res := range results {
			if i > 0 {
				fmt.Fprintln(stdio.Stdout)
			}
			printScan(stdio.Stdout, res)
		}
	}
	total := &scanResult{}
	for _, res := range results {
		total.Items = append(total.Items, res.Items...)
	}
	return total.verdict()
}

// matrixEntry is one job of the sweep's fan-out: what `fixrail run --repo
// REPO --issue N` (or --alert N) needs, and the finding for the job's
// concurrency group.
type matrixEntry struct {
	Repo    string `json:"repo"`
	Finding string `json:"finding"`
	Kind    string `json:"kind"`
	Number  int    `json:"number"`
}

// printMatrix prints {"include": [...]} on one line, for $GITHUB_OUTPUT.
// Only what a run would start on now (to-fix); past GitHub's 256 jobs the
// rest waits for the next sweep, said on stderr. Exit 0: the listing is
// the step's output, not a verdict.
func printMatrix(stdio Stdio, results []*scanResult) error {
	m := struct {
		Include []matrixEntry `json:"include"`
	}{Include: []matrixEntry{}}
	left := 0
	for _, res := range results {
		for _, it := range res.Items {
			if it.Group != groupToFix || (it.Kind != "issue" && it.Kind != "alert") {
				continue
			}
			if len(m.Include) == maxMatrix {
				left++
				continue
			}
			m.Include = append(m.Include, matrixEntry{Repo: res.Repo, Finding: it.Finding, Kind: it.Kind, Number: it.Number})
		}
	}
	if left > 0 {
		fmt.Fprintf(stdio.Stderr, "scan: %d more finding(s) past GitHub Actions' %d jobs a matrix; the next sweep takes them\n", left, maxMatrix)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdio.Stdout, "%s\n", b)
	return err
}
