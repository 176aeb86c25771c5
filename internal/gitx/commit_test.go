package gitx

import (
	"strings"
	"testing"
)

func TestParseCommit(t *testing.T) {
	tree, p1, p2 := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for _, tc := range []struct {
		name, raw string
		parents   int
		msg       string
		wantErr   string
	}{
		{"one parent", "tree " + tree + "\nparent " + p1 + "\nauthor x <x> 1 +0000\ncommitter x <x> 1 +0000\n\nsubject\n\nFixrail-Base: " + p1 + "\n", 1, "subject\n\nFixrail-Base: " + p1 + "\n", ""},
		{"root", "tree " + tree + "\nauthor x <x> 1 +0000\n\nroot\n", 0, "root\n", ""},
		{"merge", "tree " + tree + "\nparent " + p1 + "\nparent " + p2 + "\n\nm\n", 2, "m\n", ""},
		{"no message", "tree " + tree + "\nparent " + p1 + "\n", 1, "", ""},
		{"two trees", "tree " + tree + "\ntree " + tree + "\n\nx\n", 0, "", "two tree headers"},
		{"bad parent", "tree " + tree + "\nparent zz\n\nx\n", 0, "", "parent"},
		{"no tree", "parent " + p1 + "\n\nx\n", 0, "", "no tree header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseCommit(tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Tree != tree || len(c.Parents) != tc.parents || c.Message != tc.msg {
				t.Fatalf("parseCommit = %+v, %v", c, err)
			}
		})
	}
}
