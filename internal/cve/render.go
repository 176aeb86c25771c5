package cve

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JSON renders the decision as indented JSON.
func (d *Decision) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// maxShown bounds one registry string in the PR body.
const maxShown = 200

// Code renders untrusted s as a Markdown code span: control characters and
// newlines become spaces, it is cut to maxShown runes, and the backtick
// fence is one longer than the longest backtick run inside, so nothing in s
// can close it and become Markdown (a link, an image, a mention, HTML).
func Code(s string) string {
	s = flatten(s)
	if s == "" {
		return "` `"
	}
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	// CommonMark strips one space from each side when both are present and
	// the content is not all spaces; pad when s begins or ends with a
	// backtick or a space so that s survives exactly.
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

func flatten(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxShown {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Markdown renders the decision as a section of the PR body. Every string
// that came from a registry (versions, ids, aliases, summaries, the package
// name) is inside a code span built by Code; only fixrail's own words are
// Markdown.
func (d *Decision) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Version decision\n\n")
	fmt.Fprintf(&b, "- package: %s (%s)\n", Code(d.Package), Code(d.Ecosystem))
	fmt.Fprintf(&b, "- installed: %s\n", Code(d.Installed))
	switch d.Outcome {
	case Upgrade:
		fmt.Fprintf(&b, "- target: %s — a **%s** bump, %d major version(s) crossed", Code(d.Target), d.Bump.Class, d.Bump.MajorsCrossed)
		if d.Bump.Breaking {
			b.WriteString(", **breaking by version number**")
		}
		b.WriteString("\n")
	case AlreadySafe:
		b.WriteString("- target: none — no known advisory affects the installed version\n")
	case NoSafeVersion:
		b.WriteString("- target: **none — no published version is clear of every advisory** (escalated)\n")
	}
	fmt.Fprintf(&b, "- data: %d advisories from OSV (fetched %s%s), %d published versions from deps.dev (fetched %s%s)\n",
		d.Advisories, d.Data.FetchedAt.UTC().Format("2006-01-02 15:04 UTC"), staleNote(d.Data.Stale),
		d.Published, d.Versions.FetchedAt.UTC().Format("2006-01-02 15:04 UTC"), staleNote(d.Versions.Stale))
	fmt.Fprintf(&b, "\n**Rationale.** %s.\n\n**Policy.** %s.\n", d.mdRationale(), Policy)
	section := func(title string, as []Advisory) {
		fmt.Fprintf(&b, "\n#### %s (%d)\n\n", title, len(as))
		if len(as) == 0 {
			b.WriteString("none\n")
			return
		}
		for _, a := range as {
			fmt.Fprintf(&b, "- %s", Code(a.ID))
			if len(a.Aliases) > 0 {
				parts := make([]string, len(a.Aliases))
				for i, al := range a.Aliases {
					parts[i] = Code(al)
				}
				fmt.Fprintf(&b, " (also %s)", strings.Join(parts, ", "))
			}
			if a.Summary != "" {
				fmt.Fprintf(&b, ": %s", Code(a.Summary))
			}
			b.WriteString("\n")
		}
	}
	if d.Outcome == Upgrade {
		section("Advisories cleared", d.Cleared)
	} else {
		section("Advisories affecting the installed version", d.Affecting)
	}
	section("Still open", d.StillOpen)
	section("Advisories without a usable version range", d.WithoutRanges)
	fmt.Fprintf(&b, "\n#### Candidates passed over (%d)\n\n", len(d.PassedOver)+d.PassedOverOmitted)
	if len(d.PassedOver) == 0 {
		b.WriteString("none\n")
	}
	for _, p := range d.PassedOver {
		fmt.Fprintf(&b, "- %s: %s", Code(p.Version), p.Reason)
		if len(p.By) > 0 {
			ids := make([]string, len(p.By))
			for i, id := range p.By {
				ids[i] = Code(id)
			}
			fmt.Fprintf(&b, " by %s", strings.Join(ids, ", "))
		}
		b.WriteString("\n")
	}
	if d.PassedOverOmitted > 0 {
		fmt.Fprintf(&b, "- … and %d more\n", d.PassedOverOmitted)
	}
	return b.String()
}

func staleNote(stale bool) string {
	if stale {
		return ", **stale: served offline past the cache TTL**"
	}
	return ""
}

// mdRationale is Rationale rebuilt with its registry strings (versions) in
// code spans; the JSON Rationale is plain text.
func (d *Decision) mdRationale() string {
	switch d.Outcome {
	case Upgrade:
		return fmt.Sprintf("%s is the lowest published version above %s that none of the %d advisories for the package affects; it clears the %d that affect %s",
			Code(d.Target), Code(d.Installed), d.Advisories, len(d.Cleared), Code(d.Installed))
	case AlreadySafe:
		return fmt.Sprintf("none of the %d advisories for the package affects %s", d.Advisories, Code(d.Installed))
	}
	return fmt.Sprintf("no published version above %s is clear of the %d advisories for the package", Code(d.Installed), d.Advisories)
}
