package findings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// trusted are the fields a source validates (ID: SafeName; FixType: a
// registered name) or the harness sets (Source, the digest fixrail computes
// of a secret); every other string a finding carries is untrusted. Secret
// is withheld: TestSecretIsWithheld holds it to that.
var trusted = map[string]bool{"ID": true, "Source": true, "FixType": true, "Evidence.SecretSHA256": true, "Secret": true}

// fill sets every string (and string slice element) in v to a distinct
// marker, and returns the markers.
func fill(v reflect.Value, prefix string) []string {
	var marks []string
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if trusted[prefix+name] {
			continue
		}
		m := "MARK-" + prefix + name
		switch f.Kind() {
		case reflect.String:
			f.SetString(m)
			marks = append(marks, m)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf([]string{m + "-0", m + "-1"}))
				marks = append(marks, m+"-0", m+"-1")
			}
		case reflect.Pointer:
			e := reflect.New(f.Type().Elem())
			marks = append(marks, fill(e.Elem(), name+".")...)
			f.Set(e)
		}
	}
	return marks
}

// TestEveryUntrustedFieldIsMappedAndFenced: a new field on Finding or
// Evidence cannot be left out of redaction (Map) or of the prompt's fences
// (Untrusted) without this test failing.
func TestEveryUntrustedFieldIsMappedAndFenced(t *testing.T) {
	f := &Finding{ID: "id", Source: "src", FixType: "bug"}
	marks := fill(reflect.ValueOf(f).Elem(), "")
	f.Evidence.Line = 7
	var all strings.Builder
	for _, fl := range f.Untrusted() {
		all.WriteString(fl.Value + "\n")
	}
	for _, m := range marks {
		if !strings.Contains(all.String(), m) {
			t.Errorf("Untrusted() leaves out %s", m)
		}
	}
	seen := map[string]bool{}
	g, err := f.Map(func(s string) (string, error) {
		seen[s] = true
		return "mapped", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		if !seen[m] {
			t.Errorf("Map does not pass %s through the function", m)
		}
	}
	for _, fl := range g.Untrusted() {
		if strings.Contains(fl.Value, "MARK-") {
			t.Errorf("the mapped copy still holds %q in %s", fl.Value, fl.Name)
		}
	}
	if f.Title != "MARK-Title" || f.Evidence.Package != "MARK-Evidence.Package" || f.Labels[0] != "MARK-Labels-0" {
		t.Error("Map changed the original finding")
	}
	if g.ID != "id" || g.FixType != "bug" || g.Type() != "bug" {
		t.Errorf("Map changed the trusted fields: %+v", g)
	}
}

// TestSecretIsWithheld: a secret finding's value reaches no prompt fence,
// no redaction callback and no JSON; only the secret fix type may place it.
func TestSecretIsWithheld(t *testing.T) {
	const value = "MARK-the-credential"
	f := &Finding{ID: "id", Title: "t", Secret: value, Evidence: &Evidence{Path: "a.go"}}
	for _, fl := range f.Untrusted() {
		if strings.Contains(fl.Value, value) {
			t.Errorf("Untrusted() carries the secret in %s", fl.Name)
		}
	}
	g, err := f.Map(func(s string) (string, error) {
		if s == value {
			t.Error("Map passed the secret to the function")
		}
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Secret != value {
		t.Error("Map dropped the secret from the copy")
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), value) {
		t.Errorf("the JSON form carries the secret: %s", b)
	}
}
