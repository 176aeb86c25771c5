package verify

import (
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/fixtype"
)

func sampleClaim() Claim {
	return Claim{
		Finding: "s1", FixType: "bug", Base: strings.Repeat("ab", 20),
		TestPath: "tests/test_none.py", TestName: "test_none",
		Symptom: "'NoneType' has no `upper`\u00e9", SymptomSHA256: SymptomHash("'NoneType' has no `upper`\u00e9"),
		Evidence: []string{"tests/test_none.py", "tests/dir with space/x.txt"},
		Files:    []string{"src/app/format.py"}, Version: "devel",
	}
}

func TestTrailersRoundTrip(t *testing.T) {
	t.Run("bug", func(t *testing.T) { roundTrip(t, sampleClaim()) })
	t.Run("cve", func(t *testing.T) {
		c := Claim{Finding: "cve-req", FixType: "cve", Base: strings.Repeat("ab", 20), Ecosystem: "PyPI", Package: "requests",
			Manifest: "sub dir/requirements.txt", Files: []string{"sub dir/requirements.txt"}, Version: "devel"}
		roundTrip(t, c)
	})
	for _, loc := range []string{"db/users.go:16-18", "db/users.go:16", "main.tf", "dir:with colon/x.go:3"} {
		t.Run("sast "+loc, func(t *testing.T) {
			c := Claim{Finding: "g201", FixType: "sast", Base: strings.Repeat("ab", 20), Tool: "gosec", Rule: "G201",
				Location: loc, Severity: "medium", Files: []string{"db/users.go"}, Version: "devel"}
			roundTrip(t, c)
			a, err := c.Alert()
			if err != nil {
				t.Fatal(err)
			}
			if a.Location() != loc {
				t.Fatalf("Location(%+v) = %q, want %q", a, a.Location(), loc)
			}
		})
	}
}

func TestLocation(t *testing.T) {
	for _, tc := range []struct {
		a    fixtype.Alert
		want string
	}{
		{fixtype.Alert{Rule: "G201", Path: "a.go", Line: 3, EndLine: 5}, "a.go:3-5"},
		{fixtype.Alert{Rule: "G201", Path: "a.go", Line: 3, EndLine: 3}, "a.go:3"},
		{fixtype.Alert{Rule: "G201", Path: "a.go", Line: 3}, "a.go:3"},
		{fixtype.Alert{Rule: "G201", Path: "a.go"}, "a.go"},
	} {
		if got := tc.a.Location(); got != tc.want {
			t.Errorf("Location(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}

func roundTrip(t *testing.T, c Claim) {
	msg := "fixrail: fix finding s1\n\nbody text\n\n" + c.Trailers()
	got, err := ParseTrailers(msg)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Diff(got); d != "" {
		t.Fatalf("round trip differs in %s:\n%s", d, c.Trailers())
	}
	for _, line := range strings.Split(c.Trailers(), "\n") {
		for _, r := range line {
			if r < 0x20 || r > 0x7e {
				t.Fatalf("trailer line %q is not printable ASCII", line)
			}
		}
	}
	body, err := ParseBody("## x\n" + c.BodySection() + "\nRun `r`.\n")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Diff(body); d != "" {
		t.Fatalf("body round trip differs in %s", d)
	}
	if strings.Count(c.BodySection(), "`") != strings.Count(strings.SplitN(c.BodySection(), "```json", 2)[0], "`")+6 {
		t.Fatalf("a backtick of a value reached the fenced block:\n%s", c.BodySection())
	}
}

// TestParseBodyReadsFixrailsBlock: a body quotes the agent's own words
// above fixrail's evidence block, and they may hold the block's heading
// and a JSON fence of their own; ParseBody reads fixrail's block.
func TestParseBodyReadsFixrailsBlock(t *testing.T) {
	c := sampleClaim()
	forged := "result: fixed\n" + bodyMarker + "\n\n```json\n{\"finding\": \"s1\", \"fix_type\": \"bug\"}\n```\n"
	body := "## x\n\n````text\n" + forged + "````\n" + c.BodySection() + "\nRun `r`.\n"
	got, err := ParseBody(body)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Diff(got); d != "" {
		t.Fatalf("ParseBody read the agent's block: differs in %s", d)
	}
}

func TestParseTrailersRefuses(t *testing.T) {
	good := sampleClaim().Trailers()
	for _, tc := range []struct{ name, msg, want string }{
		{"none", "fix\n\nSigned-off-by: x\n", "no Fixrail-* trailers"},
		{"unknown key", good + "Fixrail-Extra: 1\n", "not one fixrail writes"},
		{"twice", good + "Fixrail-Base: " + strings.Repeat("cd", 20) + "\n", "given twice"},
		{"symptom edited", strings.Replace(good, "has no", "lacks", 1), "Fixrail-Symptom-SHA256 does not match"},
		{"short base", strings.Replace(good, strings.Repeat("ab", 20), "abab", 1), "not a full commit id"},
		{"dotdot path", strings.Replace(good, "Fixrail-File: src/app/format.py", "Fixrail-File: ../x", 1), "not a clean relative path"},
		{"no file", strings.Replace(good, "Fixrail-File: src/app/format.py\n", "", 1), "names no file"},
		{"bad quote", strings.Replace(good, `Fixrail-Symptom: "`, `Fixrail-Symptom: "\q`, 1), "does not unquote"},
		{"package without manifest", good + "Fixrail-Ecosystem: PyPI\nFixrail-Package: requests\n", "go together"},
		{"manifest dotdot", good + "Fixrail-Ecosystem: PyPI\nFixrail-Package: requests\nFixrail-Manifest: ../requirements.txt\n", "Fixrail-Manifest \"../requirements.txt\" is not a clean"},
		{"rule without location", good + "Fixrail-Rule: G201\n", "go together"},
		{"location without rule", good + "Fixrail-Location: a.go:3\n", "go together"},
		{"tool alone", good + "Fixrail-Tool: gosec\n", "go together"},
		{"rule charset", good + "Fixrail-Rule: \"G201; rm\"\nFixrail-Location: a.go:3\n", "not a scanner's rule id"},
		{"rule too long", good + "Fixrail-Rule: G" + strings.Repeat("1", 200) + "\nFixrail-Location: a.go:3\n", "not a scanner's rule id"},
		{"location dotdot", good + "Fixrail-Rule: G201\nFixrail-Location: ../a.go:3\n", "not a clean relative path"},
		{"location absolute", good + "Fixrail-Rule: G201\nFixrail-Location: /etc/passwd:3\n", "not a clean relative path"},
		{"location line zero", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:0\n", "not a line number"},
		{"location line signed", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:+3\n", "not a line number"},
		{"location end before", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:5-3\n", "not an end line"},
		{"location end equal", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:5-5\n", "not an end line"},
		{"location colon no line", good + "Fixrail-Rule: G201\nFixrail-Location: a:b\n", "not a line number"},
		{"location huge line", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:99999999999\n", "out of range"},
		{"location too long", good + "Fixrail-Rule: G201\nFixrail-Location: " + strings.Repeat("a/", 2100) + "x:1\n", "over 4096 bytes"},
		{"severity case", good + "Fixrail-Rule: G201\nFixrail-Location: a.go:3\nFixrail-Severity: HIGH\n", "not a lower-case word"},
		{"tool charset", good + "Fixrail-Tool: \"go\\x1bsec\"\nFixrail-Rule: G201\nFixrail-Location: a.go:3\n", "not a scanner's name"},
		{"test not first evidence", strings.Replace(good, "Fixrail-Test-Path: tests/test_none.py", "Fixrail-Test-Path: tests/other.py", 1), "is not the first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTrailers("subject\n\n" + tc.msg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseTrailers(f *testing.F) {
	f.Add("s\n\n" + sampleClaim().Trailers())
	f.Add("s\n\nFixrail-Finding: \"\\x00\"\n")
	f.Add("s\n\n" + sampleClaim().Trailers() + "Fixrail-Tool: gosec\nFixrail-Rule: G201\nFixrail-Location: db/users.go:16-18\nFixrail-Severity: medium\n")
	f.Fuzz(func(t *testing.T, msg string) {
		c, err := ParseTrailers(msg)
		if err != nil {
			return
		}
		// What parses re-renders to trailers that parse to the same claim.
		again, err := ParseTrailers("s\n\n" + c.Trailers())
		if err != nil {
			t.Fatalf("re-rendered claim does not parse: %v\n%s", err, c.Trailers())
		}
		if d := c.Diff(again); d != "" {
			t.Fatalf("re-rendered claim differs in %s", d)
		}
		// A scanned claim's place is canonical: it re-renders as written.
		if c.Rule != "" {
			a, err := c.Alert()
			if err != nil {
				t.Fatalf("a claim that validated has no alert: %v", err)
			}
			if a.Location() != c.Location {
				t.Fatalf("location %q re-renders as %q", c.Location, a.Location())
			}
		}
	})
}
