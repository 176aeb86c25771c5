package cli

import (
	"context"
	"errors"

	"github.com/fixrail/fixrail/internal/cli/resolvecmd"
	"github.com/fixrail/fixrail/internal/cve"
	"github.com/fixrail/fixrail/internal/gates"
	"github.com/fixrail/fixrail/internal/vulndata"
)

// runAdvisories is the advisory data every run's added-packages gate
// checks a fix's new packages against: the cve type's source when the
// finding has one (one source, one cache, one answer per package), else
// the one run's advisory flags describe (--offline, --cache-dir,
// --osv-url). It is asked only when a fix adds a package. A bad URL is a
// usage error; a source that cannot be built (no cache directory) answers
// every query with why, so an added package escalates naming it.
func runAdvisories(o *runOpts, vulns cve.Source) (gates.Advisories, error) {
	if vulns != nil {
		return vulns, nil
	}
	c, err := o.vulns.Client()
	if _, usage := errors.AsType[*resolvecmd.UsageError](err); usage {
		return nil, resolveUsage(err)
	}
	if err != nil {
		return unavailable{err}, nil
	}
	return c, nil
}

// unavailable is an advisory source that could not be built.
type unavailable struct{ err error }

func (u unavailable) Vulns(context.Context, vulndata.Ecosystem, string) ([]vulndata.Vuln, vulndata.Meta, error) {
	return nil, vulndata.Meta{}, u.err
}

// Versions makes unavailable a cve.Source too (verify binds the cve type
// to it): every question is answered with why.
func (u unavailable) Versions(context.Context, vulndata.Ecosystem, string) ([]vulndata.Published, vulndata.Meta, error) {
	return nil, vulndata.Meta{}, u.err
}
