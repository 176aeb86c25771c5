// Package markdown renders untrusted text into the Markdown fixrail
// publishes (PR bodies, comments) so that it shows as text and can never
// add links, images, headings or close the construct it sits in.
package markdown

import "strings"

// Code renders s inline as code, whatever it holds: on one line, delimited
// by a backtick run longer than any inside it (CommonMark), with a space of
// padding so a leading or trailing backtick cannot merge with the
// delimiter.
func Code(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

// Block renders s as a fenced text block whose fence is longer than any
// backtick run inside it, so the text cannot close it and add markup.
func Block(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// Cell renders s as a table cell: a code span with its pipes escaped.
func Cell(s string) string { return strings.ReplaceAll(Code(s), "|", "\\|") }
