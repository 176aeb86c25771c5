package forge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A check run's identity on GitHub is its name and the app that posted
// it: any GitHub App with checks:write — a repository workflow's
// GITHUB_TOKEN among them (app github-actions) — can post a green run
// named "CodeQL" on a PR's head. So a check a gate waits for can name its
// app (config's name@app-slug), and the branch's protection can pin one
// (an app id); runs of that name from any other source are then not
// counted, only listed. A name with no app named that two sources report
// green is not taken as passed: fixrail cannot tell which is the real one.

// CheckRef names a check a gate waits for and, when it names one, the
// app whose check run alone counts.
type CheckRef struct {
	Name string `json:"name"`
	// App is a GitHub App's slug (config's name@app-slug); "" is any.
	App string `json:"app,omitempty"`
	// AppID is a GitHub App's id, pinned by the branch's protection
	// (a ruleset's integration_id, classic protection's app_id); 0 is any.
	AppID int64 `json:"app_id,omitempty"`
	// PinnedBy names the protection that pinned AppID.
	PinnedBy string `json:"pinned_by,omitempty"`
}

// Pinned reports whether only one app's check run counts for c.
func (c CheckRef) Pinned() bool { return c.App != "" || c.AppID != 0 }

// String is c as a detail names it: name@app-slug as configured, the
// app id and what pinned it when the protection did.
func (c CheckRef) String() string {
	s := c.Name
	if c.App != "" {
		s += "@" + c.App
	}
	if c.AppID != 0 {
		s += fmt.Sprintf(" (app id %d", c.AppID)
		if c.PinnedBy != "" {
			s += ", pinned by " + c.PinnedBy
		}
		s += ")"
	}
	return s
}

// AnyApp is the app part that names a check with any app: the way to
// name a check whose own name holds an "@".
const AnyApp = "*"

// ParseCheckRef reads a recheck.checks or forge.required_checks entry.
// An entry with no "@" is a check name, from any app. Otherwise it splits
// at its last "@": before it the check's name, after it the slug of the
// one GitHub App whose check run counts (lowercase letters, digits and
// hyphens, e.g. CodeQL@github-advanced-security), or "*" for any app. So
// every entry has one reading: a check whose own name holds an "@" is
// written with an app, or with "@*" ("build (node@18)@*"); "build
// (node@18)" is refused, not guessed at.
func ParseCheckRef(entry string) (CheckRef, error) {
	name, app := entry, ""
	if i := strings.LastIndexByte(entry, '@'); i >= 0 {
		name, app = entry[:i], entry[i+1:]
		if app != AnyApp && !appSlug(app) {
			return CheckRef{}, fmt.Errorf("%q: after its last \"@\" comes %q, not a GitHub App slug (lowercase letters, digits, hyphens) or \"*\"; a check whose name holds an \"@\" is written name@app-slug, or name@* for any app", entry, app)
		}
		if app == AnyApp {
			app = ""
		}
	}
	if strings.TrimSpace(name) == "" || len(name) > 255 {
		return CheckRef{}, fmt.Errorf("%q is not a check name", entry)
	}
	return CheckRef{Name: name, App: app}, nil
}

// ParseCheckRefs parses every entry (ParseCheckRef).
func ParseCheckRefs(entries []string) ([]CheckRef, error) {
	var out []CheckRef
	for _, e := range entries {
		c, err := ParseCheckRef(e)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func appSlug(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// CheckNames are refs' names, for what matches by name alone (the
// branch protection's list of required contexts).
func CheckNames(refs []CheckRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// JoinChecks is refs as a detail lists them.
func JoinChecks(refs []CheckRef) string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return strings.Join(out, ", ")
}

// GateChecks is what the CI gate requires: every check the branch's
// protection pins to an app, only from that app, and the configured
// ones. A configured name with no app that the protection pins is left
// to the pin, which says whose run counts.
func GateChecks(configured []CheckRef, p Protection) []CheckRef {
	out := slices.Clone(p.PinnedChecks)
	for _, c := range configured {
		if c.App == "" && slices.ContainsFunc(p.PinnedChecks, func(pin CheckRef) bool { return pin.Name == c.Name }) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Outcome is a check run's or status's state summed up: OutcomePassed,
// OutcomeFailed, or OutcomeRunning for anything else (queued,
// in_progress, pending, waiting, requested).
func Outcome(state string) string {
	switch state {
	case "success", "neutral", "skipped":
		return OutcomePassed
	case "failure", "error", "timed_out", "cancelled", "action_required", "startup_failure", "stale":
		return OutcomeFailed
	}
	return OutcomeRunning
}

// What Answer says of one CheckRef.
const (
	OutcomePassed  = "passed"
	OutcomeFailed  = "failed"
	OutcomeRunning = "running"
	// OutcomeMissing: nothing that counts reported.
	OutcomeMissing = "missing"
	// OutcomeAmbiguous: every run that counts passed, but they came from
	// more than one source and the ref names no app.
	OutcomeAmbiguous = "ambiguous"
)

// CheckAnswer is what reported on a head for one CheckRef.
type CheckAnswer struct {
	Ref   CheckRef
	State string
	// Counted and Ignored index the checks Answer was given: those that
	// answer for Ref, and those of its name from another source than the
	// app it names (a commit status, for a pinned ref: it has no app).
	Counted, Ignored []int
}

// Answer judges ref on checks. A failed run that counts is failed (for a
// ref with no app, a red from any app is red); then a running one is
// running; none is missing; all passed from more than one source with no
// app named is ambiguous.
func Answer(ref CheckRef, checks []Check) CheckAnswer {
	a := CheckAnswer{Ref: ref}
	for i, c := range checks {
		if c.Name != ref.Name {
			continue
		}
		if ref.Pinned() && (c.Kind != "check-run" || ref.App != "" && c.App != ref.App || ref.AppID != 0 && c.AppID != ref.AppID) {
			a.Ignored = append(a.Ignored, i)
			continue
		}
		a.Counted = append(a.Counted, i)
	}
	var sources []string
	outcomes := map[string]bool{}
	for _, i := range a.Counted {
		outcomes[Outcome(checks[i].State)] = true
		if s := checks[i].source(); !slices.Contains(sources, s) {
			sources = append(sources, s)
		}
	}
	switch {
	case outcomes[OutcomeFailed]:
		a.State = OutcomeFailed
	case outcomes[OutcomeRunning]:
		a.State = OutcomeRunning
	case len(a.Counted) == 0:
		a.State = OutcomeMissing
	case len(sources) > 1:
		a.State = OutcomeAmbiguous
	default:
		a.State = OutcomePassed
	}
	return a
}

// source tells who reported c apart: the app (by id, else slug) of a
// check run, or the commit status API, which names no app.
func (c Check) source() string {
	switch {
	case c.Kind != "check-run":
		return "status"
	case c.AppID != 0:
		return strconv.FormatInt(c.AppID, 10)
	}
	return "slug:" + c.App
}

// From says who reported c, as the forge answered.
func (c Check) From() string {
	switch {
	case c.Kind != "check-run":
		return "a commit status (no app)"
	case c.App != "" && c.AppID != 0:
		return fmt.Sprintf("app %s (id %d)", c.App, c.AppID)
	case c.App != "":
		return "app " + c.App
	case c.AppID != 0:
		return fmt.Sprintf("app id %d", c.AppID)
	}
	return "an app the forge did not name"
}

// Describe is a in one clause: which runs answered, from whom, and which
// runs of the name were not counted.
func (a CheckAnswer) Describe(checks []Check) string {
	froms := func(idx []int, state bool) string {
		var out []string
		for _, i := range idx {
			s := checks[i].From()
			if state {
				s += " " + checks[i].State
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	var s string
	switch a.State {
	case OutcomeMissing:
		s = a.Ref.String() + " not reported"
	case OutcomeAmbiguous:
		s = a.Ref.String() + " green from more than one source (" + froms(a.Counted, false) + ") and no app is named: not taken as passed"
	case OutcomePassed:
		s = a.Ref.String() + " passed, reported by " + froms(a.Counted, false)
	default:
		s = a.Ref.String() + " " + a.State + ": " + froms(a.Counted, true)
	}
	if len(a.Ignored) > 0 {
		s += "; not counted, from another source than the one named: " + froms(a.Ignored, true)
	}
	return s
}
