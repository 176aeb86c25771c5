package manifest

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestStrictKeys: a lockfile or manifest key that equals a field the
// decoder knows only up to case is refused, never read: Go's decoders would
// take "Version" for "version", the package manager would not.
func TestStrictKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		data  string
		bad   bool
	}{
		{"package-lock as npm writes it", lock, `{"lockfileVersion": 3, "packages": {"": {"name": "app"}, "node_modules/left-pad": {"version": "1.0.2"}}}`, false},
		{"package-lock with Version beside version", lock, `{"lockfileVersion": 3, "packages": {"node_modules/left-pad": {"version": "1.0.2", "Version": "2.0.0"}}}`, true},
		{"package-lock with Version alone", lock, `{"lockfileVersion": 3, "packages": {"node_modules/left-pad": {"Version": "2.0.0"}}}`, true},
		{"package-lock with a PACKAGES section", lock, `{"lockfileVersion": 3, "PACKAGES": {"node_modules/left-pad": {"version": "2.0.0"}}}`, true},
		{"a package name that spells a field is a map key, not a field", lock, `{"lockfileVersion": 3, "packages": {"node_modules/Version": {"version": "1.0.0"}}}`, false},
		{"v1 dependencies with Version", lock, `{"lockfileVersion": 1, "dependencies": {"left-pad": {"Version": "2.0.0", "version": "1.0.2"}}}`, true},
		{"lock instances with Version", instances, `{"lockfileVersion": 3, "packages": {"node_modules/left-pad": {"Version": "2.0.0", "version": "1.0.2"}}}`, true},
		{"lock instances as npm writes them", instances, `{"lockfileVersion": 3, "packages": {"node_modules/left-pad": {"version": "1.0.2"}}}`, false},
		{"Cargo.lock as cargo writes it", tomlLock, "[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\n", false},
		{"Cargo.lock with a [[Package]] look-alike", tomlLock, "[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\n\n[[Package]]\nname = \"serde\"\nversion = \"9.9.9\"\n", true},
		{"Cargo.lock with Version", tomlLock, "[[package]]\nname = \"serde\"\nVersion = \"9.9.9\"\n", true},
		{"pyproject as written", pyproject, "[project]\ndependencies = [\"requests==2.0.0\"]\n", false},
		{"pyproject with a [Project] table", pyproject, "[Project]\ndependencies = [\"requests==9.9.9\"]\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse([]byte(tc.data))
			if tc.bad != errors.Is(err, ErrAmbiguousKey) {
				t.Fatalf("err = %v, want ambiguous-key refusal %v", err, tc.bad)
			}
		})
	}
}

func lock(b []byte) error      { _, err := parsePackageLock(b); return err }
func instances(b []byte) error { _, err := parseLockInstances(b); return err }
func tomlLock(b []byte) error  { _, err := parseTOMLLock(b); return err }
func pyproject(b []byte) error { _, err := parsePyproject(b); return err }

// FuzzStrictJSON: whatever strictJSON accepts, the struct holds exactly
// what the exact keys say (read again through a map, which matches keys
// exactly, as npm does).
func FuzzStrictJSON(f *testing.F) {
	f.Add(`{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0", "Version": "2"}}}`)
	f.Add(`{"packages": {"a": {"version": "1"}, "b": {"VERSION": "2"}}}`)
	f.Add(`[[{"a": {"b": [1, {"VERSION": 2}]}}]]`)
	f.Fuzz(func(t *testing.T, s string) {
		var doc struct {
			Packages map[string]struct {
				Version string `json:"version"`
			} `json:"packages"`
		}
		if strictJSON([]byte(s), &doc) != nil {
			return
		}
		var exact map[string]map[string]map[string]any
		if json.Unmarshal([]byte(s), &exact) != nil {
			return
		}
		for name, pkg := range exact["packages"] {
			want, _ := pkg["version"].(string)
			if got := doc.Packages[name].Version; got != want {
				t.Fatalf("package %q: struct read version %q, the exact key says %q", name, got, want)
			}
		}
	})
}
