package fixtype

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestRegisteredTypesAreWhole: every registered type has every part, and
// the registry holds each name once.
func TestRegisteredTypesAreWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range All() {
		if err := Validate(typ); err != nil {
			t.Error(err)
		}
		if seen[typ.Name] {
			t.Errorf("%s registered twice", typ.Name)
		}
		seen[typ.Name] = true
	}
	if !seen["bug"] || !seen["cve"] {
		t.Errorf("registered %v, want bug and cve", Names())
	}
}

// TestValidateNamesEachMissingPart: removing any one function or text from
// a whole type is refused, naming the part, so a new field cannot be left
// unchecked without this test noticing (it walks the struct). The harness
// parts are optional, and each replaces a pair: a type that plans itself
// (cve) needs no Investigate or ReadPlan, one without Plan needs both,
// and no type has both ways of planning.
func TestValidateNamesEachMissingPart(t *testing.T) {
	optional := map[string]bool{"Edit": true, "Warning": true, "Retry": true, "Replay": true}
	alternative := map[string]string{"Plan": "Investigate", "Investigate": "Plan", "ReadPlan": "Plan"}
	rt := reflect.TypeOf(Type{})
	for _, whole := range []*Type{Bug, CVE, SAST, Secret, IaC} {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Type.Kind() != reflect.Func && f.Type.Kind() != reflect.String {
				continue
			}
			t.Run(whole.Name+"/"+f.Name, func(t *testing.T) {
				c := *whole
				v := reflect.ValueOf(&c).Elem()
				if v.Field(i).IsZero() {
					if _, ok := alternative[f.Name]; !ok && !optional[f.Name] {
						t.Fatalf("%s has no %s, which Validate should require", whole.Name, f.Name)
					}
					return // the type does it the other way
				}
				v.Field(i).SetZero()
				err := Validate(&c)
				other, isAlt := alternative[f.Name]
				switch {
				case optional[f.Name]:
					if err != nil {
						t.Errorf("Validate without the optional %s = %v", f.Name, err)
					}
				case isAlt:
					if err == nil || !strings.Contains(err.Error(), f.Name) && !strings.Contains(err.Error(), other) {
						t.Errorf("Validate without %s = %v, want it (or %s) named", f.Name, err, other)
					}
				case err == nil || !strings.Contains(err.Error(), f.Name):
					t.Errorf("Validate without %s = %v, want it named", f.Name, err)
				}
			})
		}
	}
	both := *CVE
	both.Investigate, both.ReadPlan = Bug.Investigate, Bug.ReadPlan
	if err := Validate(&both); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a type with Plan and Investigate: Validate = %v, want refused", err)
	}
}

func TestRegisterAndLookup(t *testing.T) {
	c := *Bug
	c.Name = "bug-copy"
	Register(&c)
	t.Cleanup(func() { Unregister("bug-copy") })
	if got, err := Lookup("bug-copy"); err != nil || got != &c {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
	if _, err := Lookup("nope"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "bug") {
		t.Errorf("Lookup(nope) = %v, want ErrUnknown listing the registered types", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register(&c)
}
