package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{
			// RFC 8785 §3.2.3: keys sort by UTF-16 code units, so the emoji
			// (surrogate pair D83D DE00) sorts before U+FB33, unlike code
			// point order.
			name: "rfc8785 key order",
			in:   `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{
			name: "literal non-ASCII keys sort like their escapes",
			in:   "{\"\uFB33\":1,\"😀\":2,\"é\":3,\"z\":4}",
			want: "{\"z\":\"4\",\"é\":\"3\",\"😀\":\"2\",\"\uFB33\":\"1\"}",
		},
		{
			// RFC 8785 §3.2.2.2 string example.
			name: "rfc8785 string escapes",
			in:   `"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`,
			want: `"€$\u000f\nA'B\"\\\\\"/"`,
		},
		{
			name: "short escapes and other controls",
			in:   `"\b\f\n\r\t\u0000\u001f\u007f"`,
			want: "\"\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\"",
		},
		{
			name: "html characters and line separators stay literal",
			in:   `"<a href=\"x\">&</a>\u2028\u2029"`,
			want: "\"<a href=\\\"x\\\">&</a>\u2028\u2029\"",
		},
		{
			name: "uppercase hex escape",
			in:   `"caf\u00E9"`,
			want: `"café"`,
		},
		{
			name: "nested objects and arrays, whitespace removed",
			in:   " {\n \"b\" : [ 1 , { \"d\" : true , \"c\" : null } ] ,\t\"a\" : { \"z\" : \"x\" , \"y\" : -0 } , \"e\": [], \"f\": {} } ",
			want: `{"a":{"y":"0","z":"x"},"b":["1",{"c":null,"d":true}],"e":[],"f":{}}`,
		},
		{
			name: "numbers become strings, big integers exactly",
			in:   `[0,-7,42,12345678901234567890,-0]`,
			want: `["0","-7","42","12345678901234567890","0"]`,
		},
		{
			name: "a string that looks like a number is unchanged",
			in:   `{"n":"1"}`,
			want: `{"n":"1"}`,
		},
		{name: "top-level literal", in: `true`, want: `true`},
		{name: "top-level number", in: `7`, want: `"7"`},
		{name: "fraction", in: `{"a":1.5}`, wantErr: ErrFloat},
		{name: "exponent", in: `[1e3]`, wantErr: ErrFloat},
		{name: "negative exponent", in: `-2E-1`, wantErr: ErrFloat},
		{name: "leading zero", in: `01`, wantErr: ErrInvalidJSON},
		{name: "lone minus", in: `-`, wantErr: ErrInvalidJSON},
		{name: "plus sign", in: `+1`, wantErr: ErrInvalidJSON},
		{name: "duplicate key", in: `{"a":1,"b":2,"a":3}`, wantErr: ErrDuplicateKey},
		{name: "duplicate key after unescaping", in: `{"a":1,"\u0061":2}`, wantErr: ErrDuplicateKey},
		{name: "duplicate key in nested object", in: `[{"x":{"k":1,"k":1}}]`, wantErr: ErrDuplicateKey},
		{name: "lone high surrogate", in: `"\ud800"`, wantErr: ErrInvalidJSON},
		{name: "lone low surrogate", in: `"\udc00x"`, wantErr: ErrInvalidJSON},
		{name: "high surrogate then non-surrogate", in: `"\ud800\u0041"`, wantErr: ErrInvalidJSON},
		{name: "invalid UTF-8", in: "\"\xff\"", wantErr: ErrInvalidJSON},
		{name: "UTF-8 encoded surrogate", in: "\"\xed\xa0\x80\"", wantErr: ErrInvalidJSON},
		{name: "raw control character", in: "\"a\nb\"", wantErr: ErrInvalidJSON},
		{name: "bad escape", in: `"\x41"`, wantErr: ErrInvalidJSON},
		{name: "trailing data", in: `{} {}`, wantErr: ErrInvalidJSON},
		{name: "trailing comma", in: `[1,]`, wantErr: ErrInvalidJSON},
		{name: "empty", in: ``, wantErr: ErrInvalidJSON},
		{name: "unterminated", in: `{"a":`, wantErr: ErrInvalidJSON},
		{name: "single quotes", in: `{'a':1}`, wantErr: ErrInvalidJSON},
		{name: "too deep", in: strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), wantErr: ErrInvalidJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize(json.RawMessage(tc.in))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Canonicalize(%q) error = %v, want %v", tc.in, err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidJSON) {
					t.Errorf("error %v does not wrap ErrInvalidJSON", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Canonicalize(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("Canonicalize(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			again, err := Canonicalize(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("canonicalising again gave %q, %v", again, err)
			}
		})
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,"x\u0000"]}`,
		`{"\ud83d\ude00":"😀","\ufb33":{"":-0}}`,
		`"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`,
		`[1.5]`, `{"a":1,"a":2}`, `"\ud800"`, "\"\xff\"", ``, `[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("error %v does not wrap ErrInvalidJSON", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Canonicalize(%q) = %q, not valid JSON", in, out)
		}
		if !json.Valid(in) {
			t.Fatalf("Canonicalize accepted invalid JSON %q", in)
		}
		// Same meaning as the input, once its numbers are read as strings.
		if diff := cmp.Diff(decodeNumbersAsStrings(t, in), decodeNumbersAsStrings(t, out)); diff != "" {
			t.Fatalf("Canonicalize(%q) = %q changed the value (-in +out):\n%s", in, out, diff)
		}
		again, err := Canonicalize(out)
		if err != nil {
			t.Fatalf("Canonicalize(%q) failed on its own output %q: %v", in, out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not stable: %q then %q", out, again)
		}
	})
}

// decodeNumbersAsStrings decodes data with encoding/json, turning every
// number into the string of its digits, as Canonicalize does.
func decodeNumbersAsStrings(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json rejects %q: %v", data, err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			if v == "-0" {
				return "0"
			}
			return string(v)
		case []any:
			for i := range v {
				v[i] = conv(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = conv(v[k])
			}
		}
		return v
	}
	return conv(v)
}
