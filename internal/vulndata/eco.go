package vulndata

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"deps.dev/util/semver"
	"golang.org/x/mod/module"
)

// Ecosystem is an OSV ecosystem name, spelled exactly as OSV spells it (the
// API is case-sensitive).
type Ecosystem string

// The ecosystems fixrail resolves versions for.
const (
	PyPI     Ecosystem = "PyPI"
	NPM      Ecosystem = "npm"
	Go       Ecosystem = "Go"
	Maven    Ecosystem = "Maven"
	Cargo    Ecosystem = "crates.io"
	RubyGems Ecosystem = "RubyGems"
)

// ErrUnknownEcosystem means an ecosystem fixrail has no version source or
// ordering for.
var ErrUnknownEcosystem = errors.New("unknown ecosystem")

// ErrBadVersion means a version string the ecosystem's ordering cannot place.
var ErrBadVersion = errors.New("unorderable version")

// ParseEcosystem maps the names people and scanners use (pypi, cargo, gem,
// golang, …) onto the OSV name.
func ParseEcosystem(s string) (Ecosystem, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pypi", "pip", "python":
		return PyPI, nil
	case "npm", "node":
		return NPM, nil
	case "go", "golang", "gomod":
		return Go, nil
	case "maven", "java":
		return Maven, nil
	case "crates.io", "cargo", "crates", "rust":
		return Cargo, nil
	case "rubygems", "gem", "gems", "bundler", "ruby":
		return RubyGems, nil
	}
	return "", fmt.Errorf("%w %q (known: PyPI, npm, Go, Maven, crates.io, RubyGems)", ErrUnknownEcosystem, s)
}

// system is deps.dev's comparator for the ecosystem and its system name in
// deps.dev URLs.
func (e Ecosystem) system() (semver.System, string) {
	switch e {
	case PyPI:
		return semver.PyPI, "PYPI"
	case NPM:
		return semver.NPM, "NPM"
	case Go:
		return semver.Go, "GO"
	case Maven:
		return semver.Maven, "MAVEN"
	case Cargo:
		return semver.Cargo, "CARGO"
	case RubyGems:
		return semver.RubyGems, "RUBYGEMS"
	}
	return semver.DefaultSystem, ""
}

// Known reports whether e is one of the ecosystems above.
func (e Ecosystem) Known() bool { _, s := e.system(); return s != "" }

// NormalizeName is the package's identity for comparison and cache keys:
// PEP 503 for PyPI (runs of - _ . become one -, lower case), the name as
// given elsewhere (npm, Go, Maven and Cargo names are case-sensitive or
// already canonical).
func (e Ecosystem) NormalizeName(name string) string {
	if e != PyPI {
		return name
	}
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// canon rewrites v into the form deps.dev's parser accepts, owning the traps
// the note measured: Go needs exactly one leading "v" (OSV's Go ranges have
// none, deps.dev's versions have one), and a RubyGems lockfile version may
// carry a platform suffix ("1.16.0-x86_64-linux") that is not part of the
// version (RubyGems versions never contain '-': a prerelease is ".pre").
func (e Ecosystem) canon(v string) string {
	v = strings.TrimSpace(v)
	switch e {
	case Go:
		if !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
	case RubyGems:
		if i := strings.IndexByte(v, '-'); i > 0 {
			v = v[:i]
		}
	}
	return v
}

// Version is a parsed version that keeps the string it came from.
type Version struct {
	Raw string
	v   *semver.Version
}

// Parse parses v in the ecosystem's ordering.
func (e Ecosystem) Parse(v string) (Version, error) {
	sys, name := e.system()
	if name == "" {
		return Version{}, fmt.Errorf("%w %q", ErrUnknownEcosystem, string(e))
	}
	if len(v) > 256 {
		return Version{}, fmt.Errorf("%w: %d-byte version", ErrBadVersion, len(v))
	}
	pv, err := sys.Parse(e.canon(v))
	if err != nil {
		return Version{}, fmt.Errorf("%w %q in %s: %v", ErrBadVersion, v, e, err)
	}
	return Version{Raw: v, v: pv}, nil
}

// Compare orders a and b; both must come from the same ecosystem.
func (a Version) Compare(b Version) int { return a.v.Compare(b.v) }

// Equal is version equality in the ecosystem's sense (PyPI 2.0 == 2.0.0).
func (a Version) Equal(b Version) bool { return a.Compare(b) == 0 }

// IsPrerelease applies the ecosystem's own rule, not deps.dev's, which the
// note measured wrong for Maven release qualifiers (-jre, .v20240826) and
// for PyPI dev releases.
func (e Ecosystem) IsPrerelease(raw string) bool {
	s := strings.ToLower(e.canon(raw))
	switch e {
	case NPM, Cargo, Go:
		if i := strings.IndexByte(s, '+'); i >= 0 {
			s = s[:i]
		}
		return strings.Contains(s, "-")
	case PyPI:
		if i := strings.IndexByte(s, '+'); i >= 0 {
			s = s[:i]
		}
		for _, q := range []string{"a", "b", "c", "rc", "alpha", "beta", "pre", "preview", "dev"} {
			if pep440Qualifier(s, q) {
				return true
			}
		}
		return false
	case Maven:
		for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '_' }) {
			word := strings.TrimRight(tok, "0123456789")
			digits := tok[len(word):]
			switch word {
			case "alpha", "beta", "milestone", "rc", "cr", "snapshot", "preview", "ea":
				return true
			case "a", "b", "m":
				if digits != "" {
					return true
				}
			}
		}
		return false
	case RubyGems:
		for _, r := range s {
			if r >= 'a' && r <= 'z' {
				return true
			}
		}
	}
	return false
}

// pep440Qualifier reports whether s has qualifier q right after a digit,
// optionally through one separator: 1.0rc1, 1.0.dev0, 1.0-beta.2.
func pep440Qualifier(s, q string) bool {
	for i := 0; i+len(q) <= len(s); i++ {
		if s[i:i+len(q)] != q {
			continue
		}
		j := i - 1
		if j >= 0 && (s[j] == '.' || s[j] == '-' || s[j] == '_') {
			j--
		}
		end := i + len(q)
		if j >= 0 && s[j] >= '0' && s[j] <= '9' && (end == len(s) || s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
			return true
		}
	}
	return false
}

// IsPseudo reports a Go pseudo-version (v0.0.0-20241114170450-2d3c2a9cc518),
// which names a commit, not a release.
func (e Ecosystem) IsPseudo(raw string) bool {
	return e == Go && module.IsPseudoVersion(e.canon(raw))
}

// Bump is the distance between two versions.
type Bump struct {
	// Class is "patch", "minor", "major" or "other" (no numeric difference
	// that says which, e.g. 1.0 → 1.0.post1).
	Class string `json:"class"`
	// MajorsCrossed counts major versions crossed; a PyPI epoch change counts
	// as one more than the majors it spans.
	MajorsCrossed int `json:"majors_crossed"`
	// Breaking is true for a major bump, and for a 0.x minor bump in
	// ecosystems with caret semantics (npm, Cargo, Go), where 0.y is the
	// breaking position.
	Breaking bool `json:"breaking"`
}

// Distance measures from → to by the numeric release components, which is
// what bump classes mean to a reader; deps.dev's Difference reports "Other"
// for several cases a reader calls a patch (note §4.3).
func (e Ecosystem) Distance(from, to string) Bump {
	ea, a := releaseNumbers(e, from)
	eb, b := releaseNumbers(e, to)
	if ea != eb {
		m := max(0, at(b, 0)-at(a, 0))
		return Bump{Class: "major", MajorsCrossed: m + 1, Breaking: true}
	}
	var bp Bump
	switch {
	case at(a, 0) != at(b, 0):
		bp = Bump{Class: "major", MajorsCrossed: max(0, at(b, 0)-at(a, 0)), Breaking: true}
	case at(a, 1) != at(b, 1):
		bp = Bump{Class: "minor", Breaking: at(a, 0) == 0 && (e == NPM || e == Cargo || e == Go)}
	case at(a, 2) != at(b, 2) || at(a, 3) != at(b, 3):
		bp = Bump{Class: "patch"}
	default:
		bp = Bump{Class: "other"}
	}
	return bp
}

func at(n []int, i int) int {
	if i < len(n) {
		return n[i]
	}
	return 0
}

// releaseNumbers is the epoch (PyPI "1!") and the leading dot-separated
// numbers of a version, ignoring a "v" and anything after them.
func releaseNumbers(e Ecosystem, raw string) (epoch int, nums []int) {
	s := strings.TrimPrefix(strings.TrimSpace(raw), "v")
	if e == PyPI {
		if i := strings.IndexByte(s, '!'); i > 0 {
			epoch, _ = strconv.Atoi(s[:i])
			s = s[i+1:]
		}
	}
	for len(nums) < 8 {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			break
		}
		nums = append(nums, n)
		if i == len(s) || s[i] != '.' {
			break
		}
		s = s[i+1:]
	}
	return epoch, nums
}

// Satisfies reports whether version meets the manifest's requirement spec
// in the ecosystem's own constraint syntax; ok is false when the spec is
// not one deps.dev's parser reads (then nothing is known either way).
func (e Ecosystem) Satisfies(spec, version string) (match, ok bool) {
	sys, name := e.system()
	if name == "" || len(spec) > 1024 {
		return false, false
	}
	if e == Go {
		return e.canon(spec) == e.canon(version), true
	}
	c, err := sys.ParseConstraint(spec)
	if err != nil {
		return false, false
	}
	v, err := sys.Parse(e.canon(version))
	if err != nil {
		return false, false
	}
	return c.MatchVersion(v), true
}
