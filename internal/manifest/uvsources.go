package manifest

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// PyPIIndex is the index uv resolves from unless the operator's
// environment names another (UV_DEFAULT_INDEX and kin, through
// extra_env), and pypiFiles where PyPI serves the files it lists.
const (
	PyPIIndex = "https://pypi.org/simple"
	pypiFiles = "https://files.pythonhosted.org/"
)

// uvLock is what UVResolvedOff reads of a uv.lock: each package's source
// and the URLs of the files uv installs it from (uv sync fetches a wheel
// or sdist by its url and checks it only against the hash the same lock
// states).
type uvLock struct {
	Package []struct {
		Name    string         `toml:"name"`
		Version string         `toml:"version"`
		Source  map[string]any `toml:"source"`
		Sdist   *struct {
			URL string `toml:"url"`
		} `toml:"sdist"`
		Wheels []struct {
			URL string `toml:"url"`
		} `toml:"wheels"`
	} `toml:"package"`
}

// uvURL is one URL a uv.lock entry names: its index (source.registry) or
// one of its files.
type uvURL struct {
	url, at string
	index   bool
}

func uvURLs(data []byte) ([]uvURL, error) {
	var doc uvLock
	if err := strictTOML(data, &doc); err != nil {
		return nil, err
	}
	var out []uvURL
	for _, p := range doc.Package {
		at := safeText(p.Name + " " + p.Version)
		if r, ok := p.Source["registry"].(string); ok {
			out = append(out, uvURL{url: r, at: at, index: true})
		}
		if p.Sdist != nil && p.Sdist.URL != "" {
			out = append(out, uvURL{url: p.Sdist.URL, at: at})
		}
		for _, w := range p.Wheels {
			if w.URL != "" {
				out = append(out, uvURL{url: w.URL, at: at})
			}
		}
	}
	return out, nil
}

// UVResolvedOff names each index or file URL in the uv.lock after that was
// not in it before and that comes from none of indexes (none is PyPI's):
// an entry's source registry must be one of them (a trailing slash
// aside), a file must lie on one's scheme and host (PyPI's files on
// files.pythonhosted.org), over https or the index's own scheme, with no
// user info. Each is "URL (at NAME VERSION)". A package whose source is
// not an index (git, a path, a URL) is the added-packages gate's
// (tomlLockForeign).
func UVResolvedOff(before, after []byte, indexes ...string) ([]string, error) {
	if len(indexes) == 0 {
		indexes = []string{PyPIIndex}
	}
	old := map[string]bool{}
	if len(before) > 0 {
		us, err := uvURLs(before)
		if err != nil {
			return nil, fmt.Errorf("%w: the lockfile before: %v", ErrParse, err)
		}
		for _, u := range us {
			old[u.url] = true
		}
	}
	us, err := uvURLs(after)
	if err != nil {
		return nil, fmt.Errorf("%w: the lockfile after: %v", ErrParse, err)
	}
	var out []string
	for _, u := range us {
		if old[u.url] || uvFrom(u, indexes) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (at %s)", safeText(u.url), u.at))
	}
	sort.Strings(out)
	return out, nil
}

// uvFrom reports whether u comes from one of indexes.
func uvFrom(u uvURL, indexes []string) bool {
	for _, ix := range indexes {
		if u.index {
			if strings.TrimSuffix(u.url, "/") == strings.TrimSuffix(ix, "/") {
				return true
			}
			continue
		}
		host := ix
		if strings.TrimSuffix(ix, "/") == PyPIIndex {
			host = pypiFiles
		}
		if sameOrigin(u.url, host) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether u has ref's scheme and host (with its port)
// and no user info, query or fragment.
func sameOrigin(u, ref string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.User != nil || pu.RawQuery != "" || pu.Fragment != "" {
		return false
	}
	pr, err := url.Parse(ref)
	if err != nil || pr.Host == "" {
		return false
	}
	return strings.EqualFold(pu.Scheme, pr.Scheme) && strings.EqualFold(pu.Host, pr.Host)
}
