package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// opens watches every file under root for opens and reads (inotify sees
// root's too) and reports which were touched since the call.
func opens(t *testing.T, root string, names []string) func() []string {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify (the read check needs it; Linux has it): %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	wd := map[int32]string{}
	for _, n := range names {
		w, err := syscall.InotifyAddWatch(fd, filepath.Join(root, n), syscall.IN_OPEN|syscall.IN_ACCESS)
		if err != nil {
			t.Fatal(err)
		}
		wd[int32(w)] = n
	}
	return func() []string {
		var seen []string
		buf := make([]byte, 1<<16)
		for {
			n, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return seen
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				seen = append(seen, wd[ev.Wd])
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestAdmitBeforeAnyRead: what the fix phase left is held to the plan and
// to the read limits by lstat alone — an unplanned file, one over the
// per-file limit, and planned files over the candidate's limit together
// are refused with their names, and inotify shows none of them was even
// opened. What passes is every planned path, directories skipped.
func TestAdmitBeforeAnyRead(t *testing.T) {
	const planned, test = "src/a.py", "tests/test_a.py"
	allowed := map[string]bool{planned: true, test: true, "src/b.bin": true, "src/c.bin": true, "src/d.bin": true, "src/e.bin": true, "src/.gitattributes": true}
	for _, tc := range []struct {
		name     string
		files    map[string]int64 // path → size, sparse
		changed  []string
		reason   string // "" admits
		detail   string // a substring of the gate detail
		admitted []string
	}{
		{"planned and evidence", map[string]int64{planned: 10, test: 20}, []string{planned, test}, "", "", []string{planned, test}},
		{"a deletion and a directory", map[string]int64{test: 20, "ignored/x": 1}, []string{planned, "ignored", test}, "", "", []string{planned, test}},
		{"at the per-file limit", map[string]int64{planned: maxEvidenceBytes}, []string{planned}, "", "", []string{planned}},
		{"one byte over the per-file limit", map[string]int64{planned: maxEvidenceBytes + 1}, []string{planned},
			"unsafe-path", "over the 8388608 bytes the harness reads of one file: src/a.py (8388609 bytes)", nil},
		{"unplanned", map[string]int64{planned: 10, "src/blob.bin": 8<<20 - 100}, []string{planned, "src/blob.bin"},
			"diff-outside-plan", "not in PLAN.json: src/blob.bin", nil},
		{"unplanned deletion", map[string]int64{planned: 10}, []string{planned, "src/util.py"},
			"diff-outside-plan", "not in PLAN.json: src/util.py", nil},
		{"many unplanned, named up to ten", manyFiles(12), manyNames(12),
			"diff-outside-plan", "not in PLAN.json: src/x/f00, src/x/f01, src/x/f02, src/x/f03, src/x/f04, src/x/f05, src/x/f06, src/x/f07, src/x/f08, src/x/f09 and 2 more", nil},
		{"at the candidate limit", map[string]int64{"src/b.bin": maxEvidenceBytes, "src/c.bin": maxEvidenceBytes, "src/d.bin": maxEvidenceBytes, "src/e.bin": maxEvidenceBytes},
			[]string{"src/b.bin", "src/c.bin", "src/d.bin", "src/e.bin"}, "", "", []string{"src/b.bin", "src/c.bin", "src/d.bin", "src/e.bin"}},
		{"over the candidate limit together", map[string]int64{planned: 1, "src/b.bin": maxEvidenceBytes, "src/c.bin": maxEvidenceBytes, "src/d.bin": maxEvidenceBytes, "src/e.bin": maxEvidenceBytes},
			[]string{planned, "src/b.bin", "src/c.bin", "src/d.bin", "src/e.bin"}, "unsafe-path", "33554433 bytes in 5 changed file(s), over the 33554432 bytes", nil},
		{"planned git metadata is left to the read loop", map[string]int64{"src/.gitattributes": 5}, []string{"src/.gitattributes"}, "", "", []string{"src/.gitattributes"}},
		{"unplanned git metadata", map[string]int64{".gitattributes": 5}, []string{".gitattributes"}, "unsafe-path", ".gitattributes", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var names []string
			for p, size := range tc.files {
				sparseFile(t, filepath.Join(root, p), size)
				names = append(names, p)
			}
			touched := opens(t, root, names)
			adm, o, why := admit(root, tc.changed, allowed)
			if seen := touched(); len(seen) > 0 {
				t.Fatalf("admit opened %q", seen)
			}
			if tc.reason == "" {
				if o != nil {
					t.Fatalf("refused: %s %s", o.Reason, o.Detail)
				}
				if strings.Join(adm.paths, ",") != strings.Join(tc.admitted, ",") {
					t.Errorf("admitted %q, want %q", adm.paths, tc.admitted)
				}
				return
			}
			if o == nil {
				t.Fatalf("admitted %q, want %s", adm.paths, tc.reason)
			}
			if o.Terminal != Escalate || o.Reason != tc.reason || !strings.Contains(why, tc.detail) || !strings.Contains(o.Detail, tc.detail) {
				t.Errorf("got %s %s %q (gate %q); want ESCALATE %s naming %q", o.Terminal, o.Reason, o.Detail, why, tc.reason, tc.detail)
			}
		})
	}
}

// TestAdmitRefusesSymlinksAndFIFOs: an unplanned symlink and any FIFO are
// refused by their kind, the FIFO without the open that would wait for a
// writer.
func TestAdmitRefusesSymlinksAndFIFOs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "src/a.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "src/link")); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"src/a.py": true}
	if _, o, _ := admit(root, []string{"src/a.py"}, allowed); o == nil || o.Reason != "unsafe-path" || !strings.Contains(o.Detail, "src/a.py") {
		t.Errorf("planned FIFO: %+v", o)
	}
	if _, o, _ := admit(root, []string{"src/link"}, allowed); o == nil || o.Reason != "unsafe-path" || !strings.Contains(o.Detail, "src/link, which is a symlink") {
		t.Errorf("unplanned symlink: %+v", o)
	}
}

func manyNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, "src/x/f"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	return out
}

func manyFiles(n int) map[string]int64 {
	m := map[string]int64{}
	for _, p := range manyNames(n) {
		m[p] = 100
	}
	return m
}
