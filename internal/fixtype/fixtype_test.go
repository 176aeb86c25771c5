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
	if !seen["bug"] {
		t.Error("the bug type is not registered")
	}
}

// TestValidateNamesEachMissingPart: removing any one function or text from
// a whole type is refused, naming the part, so a new field cannot be left
// unchecked without this test noticing (it walks the struct).
func TestValidateNamesEachMissingPart(t *testing.T) {
	rt := reflect.TypeOf(Type{})
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type.Kind() != reflect.Func && f.Type.Kind() != reflect.String {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			c := *Bug
			reflect.ValueOf(&c).Elem().Field(i).SetZero()
			err := Validate(&c)
			if err == nil || !strings.Contains(err.Error(), f.Name) {
				t.Errorf("Validate without %s = %v, want it named", f.Name, err)
			}
		})
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
