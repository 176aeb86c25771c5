package sarif

import (
	"slices"
	"strconv"
	"strings"
)

// Severities are the normalised severities, lowest first; Rank orders
// them. Intake (a finding's severity) and an oracle's rerun (the floor a
// new result is held to) both read a result's severity with Severity, so
// the same result of the same log is graded alike by both.
var Severities = []string{"note", "low", "medium", "high", "critical"}

// Rank is the severity's place in Severities; an unknown one ranks as
// high, so a result nobody graded is never waved through as minor.
func Rank(sev string) int {
	if i := slices.Index(Severities, sev); i >= 0 {
		return i
	}
	return slices.Index(Severities, "high")
}

// Severity normalises a result's severity to one of Severities, from the
// first of these the result (then its rule) carries:
//   - a security-severity score from 0.0 to 10.0, bucketed as GitHub
//     does (Bucket); a score out of range or not a number is ignored;
//   - a severity named as an upper-case tag (CRITICAL, HIGH, MEDIUM,
//     LOW): gosec and Trivy grade a rule only there, and write level
//     error for every grade;
//   - the level (Level: the result's, the rule's default, else warning):
//     error high, warning medium, note low, none note.
func Severity(res *Result, rule *ReportingDescriptor) string {
	bags := []*PropertyBag{res.Properties, nil}
	if rule != nil {
		bags[1] = rule.Properties
	}
	for _, p := range bags {
		if p == nil || p.SecuritySeverity == "" {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(p.SecuritySeverity), 64); err == nil && f >= 0 && f <= 10 {
			return Bucket(f)
		}
	}
	for _, p := range bags {
		if p == nil {
			continue
		}
		for _, tag := range p.Tags {
			if s := strings.ToLower(tag); tag == strings.ToUpper(tag) && s != "note" && slices.Contains(Severities, s) {
				return s
			}
		}
	}
	switch Level(res, rule) {
	case LevelError:
		return "high"
	case LevelNote:
		return "low"
	case LevelNone:
		return "note"
	}
	return "medium"
}

// Bucket maps a 0–10 security-severity score to a severity: >= 9.0
// critical, >= 7.0 high, >= 4.0 medium, > 0 low, 0 note.
func Bucket(f float64) string {
	switch {
	case f >= 9:
		return "critical"
	case f >= 7:
		return "high"
	case f >= 4:
		return "medium"
	case f > 0:
		return "low"
	}
	return "note"
}
