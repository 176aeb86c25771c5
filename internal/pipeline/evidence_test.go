package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx"
)

// TestOverTracked: evidence may add a file, or add lines to a test file
// the base has; it may not change or delete a line, change a mode,
// replace a symlink, or change a tracked file as a fixture.
func TestOverTracked(t *testing.T) {
	const suite = "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n"
	file := func(mode, data string) gitx.Entry {
		return gitx.Entry{Path: "tests/test_a.py", Mode: mode, Data: []byte(data)}
	}
	none := gitx.Entry{Path: "tests/test_a.py"}
	for _, tc := range []struct {
		name     string
		base, ev gitx.Entry
		test     bool
		ok       bool
	}{
		{"a new test", none, file("100644", "anything\n"), true, true},
		{"a new fixture", none, file("100644", "anything\n"), false, true},
		{"a tracked fixture left as it is", file("100644", suite), file("100644", suite), false, true},
		{"lines appended to a tracked test", file("100644", suite), file("100644", suite+"\n    def test_b(self):\n        self.assertEqual(2, 2)\n"), true, true},
		{"an import inserted at the top", file("100644", suite), file("100644", "import os\n"+suite), true, true},
		{"a last line without newline kept, lines after it", file("100644", "a\nb"), file("100644", "a\nb\nc\n"), true, true},
		{"a test emptied", file("100644", suite), file("100644", ""), true, false},
		{"a test rewritten", file("100644", suite), file("100644", "import unittest\n"), true, false},
		{"an assertion changed", file("100644", suite), file("100644", strings.Replace(suite, "(1, 1)", "(1, 2)", 1)), true, false},
		{"a line deleted, one added", file("100644", "a\nb\nc\n"), file("100644", "a\nc\nd\n"), true, false},
		{"lines reordered", file("100644", "a\nb\n"), file("100644", "b\na\n"), true, false},
		{"a last line extended on the same line", file("100644", "a\nb"), file("100644", "a\nbc\n"), true, false},
		{"a newline dropped is a change", file("100644", "a\nb\n"), file("100644", "a\nb"), true, false},
		{"CRLF made LF", file("100644", "a\r\nb\r\n"), file("100644", "a\nb\n"), true, false},
		{"the mode changed", file("100644", suite), file("100755", suite+"# x\n"), true, false},
		{"a tracked fixture with lines added", file("100644", suite), file("100644", suite+"# x\n"), false, false},
		{"a tracked symlink replaced", file("120000", "../elsewhere"), file("100644", "../elsewhere\nmore\n"), true, false},
		{"a tracked test deleted", file("100644", suite), none, true, false},
		{"a tracked fixture deleted", file("100644", suite), none, false, false},
		{"a tracked test made a symlink", file("100644", suite), file("120000", "/etc/passwd"), true, false},
		{"an untracked path never was", none, none, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := overTracked(tc.base, tc.ev, tc.test)
			if (why == "") != tc.ok {
				t.Fatalf("overTracked = %q, want ok=%v", why, tc.ok)
			}
		})
	}
}

// FuzzKeepsLines: lines inserted anywhere keep every line; a line of old
// replaced by one that appears nowhere in old does not.
func FuzzKeepsLines(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("x\n"), uint8(1), uint8(0))
	f.Add([]byte("a\nb"), []byte("y"), uint8(2), uint8(1))
	f.Add([]byte(""), []byte("z\n"), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, old, extra []byte, at, which uint8) {
		lines := bytes.SplitAfter(old, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		// Insert whole lines (each ending in a newline) before line at.
		ins := bytes.ReplaceAll(extra, []byte("\n"), nil)
		pos := int(at) % (len(lines) + 1)
		var grown [][]byte
		grown = append(grown, lines[:pos]...)
		grown = append(grown, append(ins, '\n'))
		grown = append(grown, lines[pos:]...)
		if pos == len(lines) && len(lines) > 0 && !bytes.HasSuffix(lines[len(lines)-1], []byte("\n")) {
			// After a last line with no newline: that line gains one.
			grown[pos-1] = append(bytes.Clone(lines[pos-1]), '\n')
		}
		if !keepsLines(old, bytes.Join(grown, nil)) {
			t.Fatalf("inserting %q at %d into %q: keepsLines = false", ins, pos, old)
		}
		if len(lines) == 0 {
			return
		}
		i := int(which) % len(lines)
		fresh := append([]byte("\x00never in old\x00"), old...)
		if bytes.Contains(old, fresh[:14]) {
			return
		}
		changed := make([][]byte, len(lines))
		copy(changed, lines)
		changed[i] = append(fresh[:14:14], '\n')
		if keepsLines(old, bytes.Join(changed, nil)) {
			t.Fatalf("replacing line %d of %q: keepsLines = true", i, old)
		}
	})
}
