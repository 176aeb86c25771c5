package sandbox_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fixrail/fixrail/internal/sandbox"
)

func TestEnviron(t *testing.T) {
	vars := map[string]string{"HOME": "/home/u", "PATH": "/bin", "EMPTY": "", "TOKEN": "secret"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"none", nil, nil},
		{"order given", []string{"PATH", "HOME"}, []string{"PATH=/bin", "HOME=/home/u"}},
		{"unset ignored", []string{"UNSET", "HOME"}, []string{"HOME=/home/u"}},
		{"set but empty kept", []string{"EMPTY"}, []string{"EMPTY="}},
		{"duplicate once", []string{"HOME", "PATH", "HOME"}, []string{"HOME=/home/u", "PATH=/bin"}},
		{"case sensitive", []string{"home"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sandbox.Environ(lookup, tc.names...)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Environ(%q) (-want +got):\n%s", tc.names, diff)
			}
		})
	}
}

func TestEnvironPanicsOnPatterns(t *testing.T) {
	lookup := func(string) (string, bool) { return "x", true }
	for _, name := range []string{"", "*", "AWS_*", "A=B", "=A"} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Environ(%q) did not panic", name)
				}
			}()
			sandbox.Environ(lookup, "HOME", name)
		})
	}
}

func TestWith(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		key, value string
		want       []string
	}{
		{"empty", nil, "A", "1", []string{"A=1"}},
		{"append", []string{"B=2"}, "A", "1", []string{"B=2", "A=1"}},
		{"replace in place", []string{"A=0", "B=2"}, "A", "1", []string{"A=1", "B=2"}},
		{"drop duplicates", []string{"A=0", "B=2", "A=3"}, "A", "1", []string{"A=1", "B=2"}},
		{"prefix is another key", []string{"AB=0"}, "A", "1", []string{"AB=0", "A=1"}},
		{"value with =", nil, "A", "x=y", []string{"A=x=y"}},
		{"empty value", []string{"A=0"}, "A", "", []string{"A="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := append([]string(nil), tc.env...)
			got := sandbox.With(tc.env, tc.key, tc.value)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("With(%q, %q, %q) (-want +got):\n%s", tc.env, tc.key, tc.value, diff)
			}
			if diff := cmp.Diff(orig, tc.env); diff != "" {
				t.Errorf("With modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWithPanicsOnBadKey(t *testing.T) {
	for _, key := range []string{"", "A*", "A=B"} {
		t.Run(key, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("With(nil, %q, ...) did not panic", key)
				}
			}()
			sandbox.With(nil, key, "v")
		})
	}
}
