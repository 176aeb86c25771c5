package manifest

import (
	"slices"
	"strings"
	"testing"
)

const uvLockSample = `version = 1

[[package]]
name = "six"
version = "1.17.0"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.pythonhosted.org/packages/aa/six-1.17.0.tar.gz", hash = "sha256:0", size = 1 }
wheels = [
    { url = "https://files.pythonhosted.org/packages/bb/six-1.17.0-py2.py3-none-any.whl", hash = "sha256:1", size = 1 },
]

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
`

// TestUVResolvedOff: an index or file URL new in the lock passes only
// from an index named (PyPI's files on their own host); http, user info
// and a lookalike host do not.
func TestUVResolvedOff(t *testing.T) {
	for _, c := range []struct {
		name, after string
		indexes     []string
		want        []string
	}{
		{"unchanged", uvLockSample, nil, nil},
		{"http file", strings.ReplaceAll(uvLockSample, "https://files.pythonhosted.org/packages/bb/", "http://files.pythonhosted.org/packages/cc/"), nil,
			[]string{"http://files.pythonhosted.org/packages/cc/six-1.17.0-py2.py3-none-any.whl (at six 1.17.0)"}},
		{"user info", strings.ReplaceAll(uvLockSample, "https://files.pythonhosted.org/packages/bb/", "https://u@files.pythonhosted.org/packages/cc/"), nil,
			[]string{"https://u@files.pythonhosted.org/packages/cc/six-1.17.0-py2.py3-none-any.whl (at six 1.17.0)"}},
		{"lookalike host", strings.ReplaceAll(uvLockSample, "files.pythonhosted.org/packages/aa/", "files.pythonhosted.org.invalid/packages/aa/"), nil,
			[]string{"https://files.pythonhosted.org.invalid/packages/aa/six-1.17.0.tar.gz (at six 1.17.0)"}},
		{"index with a slash", strings.ReplaceAll(uvLockSample, `registry = "https://pypi.org/simple"`, `registry = "https://pypi.org/simple/"`), nil, nil},
		{"the operator's index, not PyPI's files", strings.ReplaceAll(uvLockSample, "https://files.pythonhosted.org/packages/bb/", "https://files.pythonhosted.org/packages/cc/"), []string{"https://pypi.corp.example/simple"},
			[]string{"https://files.pythonhosted.org/packages/cc/six-1.17.0-py2.py3-none-any.whl (at six 1.17.0)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := UVResolvedOff([]byte(uvLockSample), []byte(c.after), c.indexes...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
	if _, err := UVResolvedOff(nil, []byte("[[package]\n")); err == nil {
		t.Error("unparseable: no error")
	}
}

// FuzzUVResolvedOff: whatever a uv.lock holds, reading it returns, and a
// lock compared with itself adds nothing.
func FuzzUVResolvedOff(f *testing.F) {
	f.Add([]byte(uvLockSample))
	f.Add([]byte("[[package]]\nname = \"x\"\nwheels = [{ url = \"\" }]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		off, err := UVResolvedOff(data, data)
		if err == nil && len(off) != 0 {
			t.Fatalf("a lock against itself: %q", off)
		}
	})
}
