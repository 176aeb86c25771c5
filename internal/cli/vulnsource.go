package cli

import (
	"flag"
	"fmt"

	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// vulnSource is the advisory source a command that decides versions asks
// (resolve-version, run with a cve finding): OSV and deps.dev behind the
// on-disk cache, or the cache alone.
type vulnSource struct {
	offline                   bool
	osvURL, depsDevURL, cache string
}

func (v *vulnSource) flags(fs *flag.FlagSet) {
	fs.BoolVar(&v.offline, "offline", false, "answer advisory and version queries from the cache only; never call out")
	fs.StringVar(&v.osvURL, "osv-url", vulndata.DefaultOSVURL, "OSV API base `URL`")
	fs.StringVar(&v.depsDevURL, "depsdev-url", vulndata.DefaultDepsDevURL, "deps.dev API base `URL`")
	fs.StringVar(&v.cache, "cache-dir", "", "advisory cache `directory` (default: the user cache dir's fixrail/vulndata)")
}

// client builds the source; a bad URL is a usage error.
func (v *vulnSource) client() (*vulndata.Client, error) {
	for _, u := range []string{v.osvURL, v.depsDevURL} {
		if err := vulndata.CheckBaseURL(u); err != nil {
			return nil, usagef("%v", err)
		}
	}
	dir := v.cache
	if dir == "" {
		var err error
		if dir, err = vulndata.DefaultCacheDir(); err != nil {
			return nil, fmt.Errorf("no cache dir: %w (use --cache-dir)", err)
		}
	}
	c := vulndata.NewClient(vulndata.NewCache(dir))
	c.OSVURL, c.DepsDevURL, c.Offline = v.osvURL, v.depsDevURL, v.offline
	return c, nil
}

// readRunFinding reads run's finding: a report, or one vulnerable
// dependency; a cve finding gets the advisory source the flags chose.
func readRunFinding(o *runOpts) (*findings.Finding, cve.Source, error) {
	var fin *findings.Finding
	if o.vuln != "" {
		vs, err := findings.ReadVulnFile(o.vuln)
		if err != nil {
			return nil, nil, err
		}
		if len(vs) != 1 {
			return nil, nil, usagef("%s holds %d vulnerable packages; run takes one (split the file)", o.vuln, len(vs))
		}
		fin = vs[0].Finding()
	} else {
		var err error
		if fin, err = findings.ReadFile(o.report); err != nil {
			return nil, nil, err
		}
	}
	if fin.Type() != findings.VulnFixType {
		return fin, nil, nil
	}
	c, err := o.vulns.client()
	if err != nil {
		return nil, nil, err
	}
	return fin, c, nil
}
