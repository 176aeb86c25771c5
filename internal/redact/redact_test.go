package redact

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustNew(t testing.TB, o Options) *Engine {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"short known value", Options{Known: []string{"1234567"}}},
		{"empty known value", Options{Known: []string{""}}},
		{"known value short once invisible characters go", Options{Known: []string{"\u00ad0\ufeff\ufeff"}}},
		{"known value inside a marker", Options{Known: []string{"REDACTED"}}},
		{"known value is a rule name", Options{Known: []string{"known-value-base64"}}},
		{"known value ends where a marker starts", Options{Known: []string{"password[REDA"}}},
		{"known value starts where a marker ends", Options{Known: []string{"pat]password"}}},
		{"known value holds a marker", Options{Known: []string{"a[REDACTED:jwt]b"}}},
		{"known value overlaps the withheld marker", Options{Known: []string{"abcdefgh\n[WITH"}}},
		{"known value inside the withheld marker", Options{Known: []string{"bytes over the scan"}}},
		{"short customer ID", Options{CustomerIDs: []string{"ab"}}},
		{"customer ID inside a marker", Options{CustomerIDs: []string{"tom"}}},
		{"negative MaxInput", Options{MaxInput: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.o); err == nil {
				t.Errorf("New(%+v) = nil error, want refusal", tc.o)
			}
		})
	}
	// Brackets elsewhere in a value are fine.
	mustNew(t, Options{Known: []string{"pa[ss]word-123"}, CustomerIDs: []string{"ACME"}})
}

func TestKnownValueForms(t *testing.T) {
	const k = "s3cr3t/val+ue &x=\"y\"?"
	e := mustNew(t, Options{Known: []string{k}})
	embed := func(enc *base64.Encoding, pre string) string {
		return enc.EncodeToString([]byte(pre + k + "trailing bytes"))
	}
	tests := []struct {
		name, form, rule string
	}{
		{"raw", k, RuleKnownValue},
		{"hex", hex.EncodeToString([]byte(k)), RuleKnownValue},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(k))), RuleKnownValue},
		{"query escaped", url.QueryEscape(k), RuleKnownValue},
		{"path escaped", url.PathEscape(k), RuleKnownValue},
		{"json escaped", `s3cr3t/val+ue &x=\"y\"?`, RuleKnownValue},
		{"base64 std padded", base64.StdEncoding.EncodeToString([]byte(k)), RuleKnownValueBase64},
		{"base64 std unpadded", base64.RawStdEncoding.EncodeToString([]byte(k)), RuleKnownValueBase64},
		{"base64 url padded", base64.URLEncoding.EncodeToString([]byte(k)), RuleKnownValueBase64},
		{"base64 url unpadded", base64.RawURLEncoding.EncodeToString([]byte(k)), RuleKnownValueBase64},
		{"base64 embedded, alignment 0", embed(base64.StdEncoding, "abc"), RuleKnownValueBase64},
		{"base64 embedded, alignment 1", embed(base64.StdEncoding, "a"), RuleKnownValueBase64},
		{"base64 embedded, alignment 2", embed(base64.StdEncoding, "ab"), RuleKnownValueBase64},
		{"base64url embedded, alignment 1", embed(base64.URLEncoding, "abcd"), RuleKnownValueBase64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := "before " + tc.form + " after"
			out, fs, err := e.Redact(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == tc.rule }) {
				t.Errorf("findings %v, want rule %s", fs, tc.rule)
			}
			// Of an embedded form at most a character or two on each side
			// depends on neighbouring bytes; the middle must be gone.
			core := tc.form
			if strings.Contains(tc.name, "embedded") {
				core = base64.StdEncoding.EncodeToString([]byte(k))[4:20]
				if strings.Contains(tc.name, "url") {
					core = ""
				}
			}
			if core != "" && strings.Contains(out, core) {
				t.Errorf("output still holds %q: %q", core, out)
			}
			if strings.Contains(out, k) {
				t.Errorf("output holds the value: %q", out)
			}
		})
	}
}

func TestRedactOutput(t *testing.T) {
	e := mustNew(t, Options{Known: []string{"hunter2-hunter2"}, CustomerIDs: []string{"ACME-0042"}})
	gh := "gh" + "p_" + strings.Repeat("EXAMPLE0123", 4)[:36]
	tests := []struct {
		name    string
		in      string
		want    string
		wantFds []Finding
	}{
		{"clean", "nothing to see here", "nothing to see here", nil},
		{"known value", "pw hunter2-hunter2.", "pw [REDACTED:known-value].", []Finding{{RuleKnownValue, 3, 18, ""}}},
		{"customer", "for ACME-0042 only", "for [REDACTED:customer-id] only", []Finding{{RuleCustomerID, 4, 13, ""}}},
		{"token keeps its key", "GITHUB_TOKEN=" + gh, "GITHUB_TOKEN=[REDACTED:github-pat]", []Finding{{"github-pat", 13, 53, ""}}},
		{"url keeps user and host", "postgres://app:Example" + "Pass99@db/x", "postgres://app:[REDACTED:url-credentials]@db/x", []Finding{{ruleURLCredentials, 15, 28, ""}}},
		{"assignment keeps key", `password: "correct-horse"`, `password: "[REDACTED:credential-assignment]"`, []Finding{{ruleAssignment, 11, 24, ""}}},
		{"two findings", "a hunter2-hunter2 b ACME-0042", "a [REDACTED:known-value] b [REDACTED:customer-id]", []Finding{{RuleKnownValue, 2, 17, ""}, {RuleCustomerID, 20, 29, ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, fs, err := e.Redact(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFds, fs); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			dfs, err := e.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantFds, dfs); diff != "" {
				t.Errorf("Detect findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOversizeWithheld(t *testing.T) {
	const limit = 1000
	e := mustNew(t, Options{MaxInput: limit})
	word := strings.Repeat("w", 9) + " "
	tests := []struct {
		name    string
		in      string
		wantCut int
	}{
		{"cut back to whitespace", strings.Repeat(word, 300), 999},
		{"no whitespace, punctuation", strings.Repeat("abcdefghi,", 300), 1000},
		{"no separator at all", strings.Repeat("a", 3000), 1000},
		{"rune boundary", strings.Repeat("é", 1500), 1000},
		{"just fits", strings.Repeat("a", limit), limit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, fs, err := e.Redact(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCut == len(tc.in) {
				if out != tc.in || len(fs) != 0 {
					t.Errorf("Redact changed input that fits: %v", fs)
				}
				return
			}
			wantTail := fmt.Sprintf("\n[WITHHELD by fixrail: %d bytes over the scan limit]", len(tc.in)-tc.wantCut)
			if !strings.HasSuffix(out, wantTail) {
				t.Errorf("output ends %q, want suffix %q", out[max(0, len(out)-80):], wantTail)
			}
			if got := strings.TrimSuffix(out, wantTail); got != tc.in[:tc.wantCut] {
				t.Errorf("scanned part is %d bytes, want %d", len(got), tc.wantCut)
			}
			want := []Finding{{RuleWithheld, tc.wantCut, len(tc.in), ""}}
			if diff := cmp.Diff(want, fs); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			dfs, err := e.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, dfs); diff != "" {
				t.Errorf("Detect findings (-want +got):\n%s", diff)
			}
		})
	}
	// The default limit is 128 KiB and a secret past it is never returned.
	d := mustNew(t, Options{Known: []string{"tail-secret-value"}})
	in := strings.Repeat("line of text\n", DefaultMaxInput/13+10) + "tail-secret-value"
	out, _, err := d.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "tail-secret") || !strings.Contains(out, "[WITHHELD by fixrail: ") {
		t.Errorf("oversize tail not withheld: ...%q", out[len(out)-100:])
	}
}

// TestWithheldCountNeverSpellsAValue: a numeric value that the withheld
// count could spell is still accepted, and the cut moves so it is not
// spelled.
func TestWithheldCountNeverSpellsAValue(t *testing.T) {
	in := strings.Repeat("a", 100) + " " + strings.Repeat("b", 123455)
	// Without the guard the marker would read "123456 bytes".
	e := mustNew(t, Options{MaxInput: 101, CustomerIDs: []string{"123456"}, Known: []string{"12345678"}})
	out, fs, err := e.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "123456") {
		t.Errorf("output spells a customer ID: %q", out)
	}
	if !strings.Contains(out, "[WITHHELD by fixrail: ") {
		t.Errorf("no withheld marker: %q", out)
	}
	if last := fs[len(fs)-1]; last.Rule != RuleWithheld || last.End != len(in) || last.Start > 100 {
		t.Errorf("withheld finding %+v", last)
	}
}

func TestBudget(t *testing.T) {
	in := strings.Repeat("some ordinary text ", 100)
	t.Run("exhausted", func(t *testing.T) {
		e := mustNew(t, Options{Budget: NewBudget(10)})
		out, fs, err := e.Redact(in)
		if !errors.Is(err, ErrBudget) || out != "" || fs != nil {
			t.Errorf("Redact = %q, %v, %v; want empty, nil, ErrBudget", out, fs, err)
		}
		if _, err := e.Detect(in); !errors.Is(err, ErrBudget) {
			t.Errorf("Detect error = %v, want ErrBudget", err)
		}
	})
	t.Run("shared across calls", func(t *testing.T) {
		b := NewBudget(int64(3 * len(in)))
		e := mustNew(t, Options{Budget: b})
		var errs []error
		for range 5 {
			_, err := e.Detect(in)
			errs = append(errs, err)
		}
		want := []error{nil, nil, nil, ErrBudget, ErrBudget}
		if diff := cmp.Diff(want, errs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
		if b.Remaining() >= 0 {
			t.Errorf("Remaining = %d, want negative", b.Remaining())
		}
	})
	t.Run("re-scan is charged", func(t *testing.T) {
		// A text with findings costs a second scan of the output.
		secret := "password=" + "correct-horse-battery "
		b := NewBudget(int64(len(secret) * 10))
		e := mustNew(t, Options{Budget: b})
		if _, _, err := e.Redact(secret); err != nil {
			t.Fatal(err)
		}
		if used := int64(len(secret)*10) - b.Remaining(); used <= int64(len(secret)) {
			t.Errorf("used %d units, want more than one scan (%d)", used, len(secret))
		}
	})
	t.Run("default never runs out on linear work", func(t *testing.T) {
		e := mustNew(t, Options{MaxInput: 1 << 20, Known: []string{"eightchr"}})
		for _, sh := range hostileShapes {
			if _, _, err := e.Redact(sh.gen(64 << 10)); err != nil {
				t.Errorf("%s: %v", sh.name, err)
			}
		}
		// Markers longer than what they replace: the output is almost
		// three times the input, and re-scanning it stays in budget.
		if _, _, err := e.Redact(strings.Repeat("eightchr", 8<<10)); err != nil {
			t.Errorf("short known values: %v", err)
		}
	})
}

func TestTooManyFindings(t *testing.T) {
	var b strings.Builder
	for i := range maxFindings + 500 {
		fmt.Fprintf(&b, "password=%08d-value\n", i)
	}
	in := b.String()
	e := mustNew(t, Options{MaxInput: len(in)})
	fs, err := e.Detect(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != maxFindings {
		t.Fatalf("%d findings, want %d", len(fs), maxFindings)
	}
	last := fs[len(fs)-1]
	if last.Rule != RuleTooManyFindings || last.End != len(in) {
		t.Errorf("last finding %+v, want too-many-findings to the end (%d)", last, len(in))
	}
	out, _, err := e.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "[REDACTED:too-many-findings]") {
		t.Errorf("output ends %q", out[len(out)-60:])
	}
	if strings.Contains(out, "-value") {
		t.Error("a value survived")
	}
}

func TestInvisibleCharacters(t *testing.T) {
	gh := "gh" + "p_" + strings.Repeat("EXAMPLE0123", 4)[:36]
	hidden := gh[:2] + "\u200b" + gh[2:20] + "\u00ad" + gh[20:]
	e := mustNew(t, Options{Known: []string{"zero-width-known"}})
	in := "a " + hidden + " b zero-\ufeffwidth-known c"
	out, fs, err := e.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{"github-pat", 2, 2 + len(hidden), ""}, {RuleKnownValue, 5 + len(hidden), 5 + len(hidden) + len("zero-\ufeffwidth-known"), ""}}
	if diff := cmp.Diff(want, fs); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("a [REDACTED:github-pat] b [REDACTED:known-value] c", out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestIdempotent: redacting redacted text changes nothing and finds
// nothing, for every corpus positive and every rule example.
func TestIdempotent(t *testing.T) {
	e := corpusEngine(t)
	r := rand.New(rand.NewPCG(7, 7))
	var inputs []string
	for _, s := range readSections(t, "testdata/corpus/positives.txt") {
		text, _ := expand(t, s.text, r)
		inputs = append(inputs, text)
	}
	for _, ri := range Rules() {
		inputs = append(inputs, ri.Example, "x"+ri.Example+"y", ri.Example+ri.Example)
	}
	all := strings.Join(inputs, "")
	inputs = append(inputs, all)
	for _, in := range inputs {
		once, _, err := e.Redact(in)
		if err != nil {
			t.Fatal(err)
		}
		twice, fs, err := e.Redact(once)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 0 || twice != once {
			t.Errorf("Redact not idempotent on %q:\nonce  %q\ntwice %q (%v)", in, once, twice, fs)
		}
	}
}

func TestRuleExamples(t *testing.T) {
	e := mustNew(t, Options{})
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
		if r.Description == "" || r.Example == "" {
			t.Errorf("rule %s lacks a description or example", r.ID)
		}
		fs, err := e.Detect(r.Example)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == r.ID }) {
			t.Errorf("rule %s does not match its own example %q: %v", r.ID, r.Example, fs)
		}
	}
}

// TestEntropyCalibration logs how often the random-token test catches
// uniformly random strings of each alphabet and length in prose, and
// requires the documented floor at 32 characters.
func TestEntropyCalibration(t *testing.T) {
	e := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(11, 13))
	alphabets := []struct{ name, chars string }{
		{"hex", hexAlphabet},
		{"base36", "abcdefghijklmnopqrstuvwxyz0123456789"},
		{"base62", alnumAlphabet},
		{"base64", alnumAlphabet + "+/"},
	}
	const n = 500
	for _, a := range alphabets {
		var row []string
		for _, l := range []int{16, 20, 24, 32, 40, 64} {
			hit := 0
			for range n {
				fs, err := e.Detect("the value " + randomString(r, a.chars, l) + " was used")
				if err != nil {
					t.Fatal(err)
				}
				if len(fs) > 0 {
					hit++
				}
			}
			row = append(row, fmt.Sprintf("%d:%3.0f%%", l, 100*float64(hit)/n))
			if l == 32 && hit < n*95/100 {
				t.Errorf("%s at 32 characters: %d/%d caught, want ≥ 95%%", a.name, hit, n)
			}
		}
		t.Logf("%-7s %s", a.name, strings.Join(row, "  "))
	}
}

func TestConcurrentUse(t *testing.T) {
	e := mustNew(t, Options{Known: []string{"concurrent-known"}, Budget: NewBudget(1 << 40)})
	in := "x concurrent-known y password=" + "abcdefgh12 z"
	want, _, err := e.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				got, _, err := e.Redact(in)
				if err != nil || got != want {
					t.Errorf("concurrent Redact = %q, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestCards: a Luhn-valid number is a card only in a card's context — a
// printed layout or a card word on its line blocks, a bare number alone in
// a string is for review, an integer in code is nothing (issue 31: 58
// blocking findings in Go's standard library, bit masks and seeds).
func TestCards(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	visa := luhnNumber(r, "4", 16)
	spaced := groupDigits(visa, " ", 4, 4, 4)
	bad := visa[:15] + string('0'+(visa[15]-'0'+1)%10)
	e := mustNew(t, Options{})
	tests := []struct {
		name, in string
		want     want
	}{
		{"digit run after pan", "pan " + visa, block},
		{"spaced", "card " + spaced + ".", block},
		{"spaced, no word", "paid with " + spaced + ".", block},
		{"dashed", "card " + groupDigits(visa, "-", 4, 4, 4), block},
		{"card then year", "card " + spaced + " 2030", block},
		{"camelCase key", `{"cardNumber": "` + visa + `"}`, block},
		{"snake key", "cc_num=" + visa, block},
		{"word after", visa + " (Visa test number)", block},
		{"CreditCard type", "var CreditCard x = " + visa, block},
		{"bare string", `"` + visa + `"`, review},
		{"bare string, single quotes", `id: '` + visa + `'`, review},
		{"bit mask in code", "\t\t\tclobbers: " + visa + ", // R25 F16 F17", none},
		{"integer in a table", "\t\t-" + visa + ", " + visa + ",", none},
		{"digits of a fraction", "\tre = 7." + visa, none},
		{"discard is no card", "discard " + visa, none},
		{"wildcard is no card", "wildcard(" + visa + ")", none},
		{"card word on another line", "card\n" + visa, none},
		{"Luhn fails", "card " + bad, none},
		{"issuer 1 (a timestamp)", "card " + luhnNumber(r, "1", 13), none},
		{"longer digit run", "card " + visa + "1234", none},
		{"glued to letters", "card id" + visa, none},
		{"followed by letters", "card " + visa + "abc", none},
		{"loose groups", "card index 6286256 100644", none},
		{"inside a hash", "card commit " + visa + "abcdef0123456789abcdef01", none},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := e.Detect(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []Finding
			for _, f := range fs {
				if f.Rule == ruleCard {
					got = append(got, f)
				}
			}
			switch {
			case tc.want == none && len(got) > 0,
				tc.want == review && (len(got) == 0 || got[0].Review != ReviewCardNoContext),
				tc.want == block && (len(got) == 0 || !got[0].Blocking()):
				t.Errorf("Detect(%q) card findings %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestAllRuleIDs keeps the marker rule list in step with Rules.
func TestAllRuleIDs(t *testing.T) {
	want := []string{RuleKnownValue, RuleKnownValueBase64, RuleCustomerID, RuleWithheld, RuleTooManyFindings}
	for _, r := range Rules() {
		want = append(want, r.ID)
	}
	if diff := cmp.Diff(want, allRuleIDs()); diff != "" {
		t.Errorf("allRuleIDs (-from Rules +got):\n%s", diff)
	}
}
