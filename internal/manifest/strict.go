package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Go's JSON and TOML decoders match an object's keys to a struct's fields
// case-insensitively; npm, pip, cargo and poetry do not. A lockfile holding
// "Version": "2.0.2" beside (or instead of) "version": "1.0.2" would be read
// here as the safe version while the package manager installs the
// vulnerable one. So a manifest or lockfile decoded into a struct is first
// walked whole, and any key that equals one of the struct's field names only
// up to case is refused: the verdict must read what the build reads, or say
// it cannot.

// ErrAmbiguousKey is a key that differs from a field name the decoder
// knows only by case.
var ErrAmbiguousKey = errors.New("a key differs from a known key only by case")

// strictJSON decodes data into v after refusing case-folded keys.
func strictJSON(data []byte, v any) error {
	if err := checkFolded(data, fieldNames(reflect.TypeOf(v), "json")); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// strictTOML decodes data into v after refusing case-folded keys.
func strictTOML(data []byte, v any) error {
	var generic map[string]any
	if _, err := toml.Decode(string(data), &generic); err != nil {
		return err
	}
	if err := checkFoldedValue(generic, fieldNames(reflect.TypeOf(v), "toml")); err != nil {
		return err
	}
	_, err := toml.Decode(string(data), v)
	return err
}

// fieldNames collects every field name (by tag, else Go name) of t and of
// the types it holds.
func fieldNames(t reflect.Type, tag string) map[string]string {
	names := map[string]string{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			names[strings.ToLower(name)] = name
			walk(f.Type)
		}
	}
	walk(t)
	return names
}

// checkFolded walks every object of a JSON document and refuses a key that
// equals a known field name up to case only. Malformed input is left to the
// decoder proper to report.
func checkFolded(data []byte, names map[string]string) error {
	err := walkJSON(json.NewDecoder(bytes.NewReader(data)), names, 0)
	if errors.Is(err, errMalformed) {
		return nil
	}
	return err
}

// errMalformed stops the walk at input the decoder cannot tokenise.
var errMalformed = errors.New("malformed")

// maxKeyDepth matches encoding/json's own nesting limit.
const maxKeyDepth = 10000

func walkJSON(dec *json.Decoder, names map[string]string, depth int) error {
	if depth > maxKeyDepth {
		return fmt.Errorf("manifest: nested over %d levels", maxKeyDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return errMalformed
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return errMalformed
			}
			if s, ok := k.(string); ok {
				if err := checkKey(s, names); err != nil {
					return err
				}
			}
		}
		if err := walkJSON(dec, names, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return errMalformed
	}
	return nil
}

func checkFoldedValue(v any, names map[string]string) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if err := checkKey(k, names); err != nil {
				return err
			}
			if err := checkFoldedValue(e, names); err != nil {
				return err
			}
		}
	case []map[string]any:
		for _, e := range x {
			if err := checkFoldedValue(e, names); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkFoldedValue(e, names); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkKey(k string, names map[string]string) error {
	if want, ok := names[strings.ToLower(k)]; ok && k != want {
		return fmt.Errorf("%w: %q where the file format has %q (a package manager reads only %q; fixrail will not guess)", ErrAmbiguousKey, k, want, want)
	}
	return nil
}
