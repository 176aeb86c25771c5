package cli

import (
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/findings"
)

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
	c, err := o.vulns.Client()
	if err != nil {
		return nil, nil, resolveUsage(err)
	}
	return fin, c, nil
}
