package risk

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/sensitive"
)

func rules(t testing.TB, cfg config.Risk) *Rules {
	t.Helper()
	pol, err := sensitive.New([]string{"src/**", "lib/**"}, []string{"src/billing/**", "src/legacy/**"}, "tests/**")
	if err != nil {
		t.Fatal(err)
	}
	return NewRules(cfg, pol)
}

func kinds(s Score, level Level) []string {
	var out []string
	for _, in := range s.Inputs {
		if in.Level == level {
			out = append(out, in.Kind+":"+in.Value)
		}
	}
	return out
}

func TestIntake(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  config.Risk
		rep  Report
		want Level
		high []string
	}{
		{"plain bug from a writer", config.Risk{}, Report{Title: "Off-by-one in format_date", Body: "src/utils/format.py:12 drops the last day of the month", Access: AccessWrite}, Low, nil},
		{"operator's own report", config.Risk{}, Report{Title: "crash on empty input", Access: AccessOperator}, Low, nil},
		{"a session token word is not auth", config.Risk{}, Report{Title: "parser: unexpected token in sessions list", Access: AccessWrite}, Low, nil},
		{"high-risk label, any case", config.Risk{}, Report{Title: "typo", Labels: []string{"bug", "SEV1"}, Access: AccessWrite}, High, []string{"label:SEV1"}},
		{"configured label", config.Risk{Labels: []string{"customer-impact"}}, Report{Title: "typo", Labels: []string{"customer-impact"}, Access: AccessWrite}, High, []string{"label:customer-impact"}},
		{"keyword in the body", config.Risk{}, Report{Title: "rounding", Body: "Totals are wrong on Payments over $100", Access: AccessWrite}, High, []string{"keyword:payment"}},
		{"phrase across words", config.Risk{}, Report{Title: "After upgrade: DATA-LOSS on save", Access: AccessWrite}, High, []string{"keyword:data loss"}},
		{"phrase words apart do not match", config.Risk{}, Report{Title: "data is fine, the loss is elsewhere", Access: AccessWrite}, Low, nil},
		{"configured keyword", config.Risk{Keywords: []string{"ledger"}}, Report{Title: "Ledger totals drift", Access: AccessWrite}, High, []string{"keyword:ledger"}},
		{"sensitive path named", config.Risk{}, Report{Title: "crash", Body: "see `src/legacy/charge.py:40`", Access: AccessWrite}, High, []string{"path:src/legacy/charge.py"}},
		{"built-in deny path named", config.Risk{}, Report{Title: "crash", Body: "in (.github/workflows/ci.yml)", Access: AccessWrite}, High, []string{"path:.github/workflows/ci.yml"}},
		{"unknown path is elevated only", config.Risk{}, Report{Title: "crash", Body: "docs/guide.md is out of date", Access: AccessWrite}, Elevated, nil},
		{"an npm scoped package is not a path", config.Risk{}, Report{Title: "@fixrail-demo/widget 1.0.0 is affected", Body: "upgrade `@types/node` too", Access: AccessWrite}, Low, nil},
		{"a path under a scope directory still is", config.Risk{}, Report{Title: "crash", Body: "see @scope/pkg/index.js", Access: AccessWrite}, Elevated, nil},
		{"a file that looks scoped still is", config.Risk{}, Report{Title: "crash", Body: "see @x/server.pem", Access: AccessWrite}, High, []string{"path:@x/server.pem"}},
		{"a fix type's implied keyword is not scored", config.Risk{}, Report{Title: "requests 2.0.0: CVE-2099-0001", Body: "a known vulnerability", Access: AccessWrite, Implied: []string{"CVE", "vulnerability"}}, Low, nil},
		{"other keywords still are", config.Risk{}, Report{Title: "stripe-payments 1.0: CVE-2099-0001", Access: AccessWrite, Implied: []string{"cve"}}, High, []string{"keyword:payment"}},
		{"implied for one type only: without it the same text is high", config.Risk{}, Report{Title: "requests 2.0.0: CVE-2099-0001", Access: AccessWrite}, High, []string{"keyword:cve"}},
		{"a declared Go module path is a name, not a path", config.Risk{}, Report{Title: "Go golang.org/x/text v0.3.7: GO-2022-1059", Body: "reports Go golang.org/x/text at v0.3.7", Access: AccessWrite, Names: []string{"golang.org/x/text"}}, Low, nil},
		{"undeclared, the same text is a path", config.Risk{}, Report{Title: "Go golang.org/x/text v0.3.7: GO-2022-1059", Access: AccessWrite}, Elevated, nil},
		{"a declared name is scored as any other path when it is sensitive", config.Risk{}, Report{Title: "bump .github/workflows/ci.yml", Access: AccessWrite, Names: []string{".github/workflows/ci.yml"}}, High, []string{"path:.github/workflows/ci.yml"}},
		{"a declared name hides only itself", config.Risk{}, Report{Title: "golang.org/x/text and docs/guide.md", Access: AccessWrite, Names: []string{"golang.org/x/text"}}, Elevated, nil},
		{"code in backticks is not a path", config.Risk{}, Report{Title: "off by one", Body: "the loop uses `i <= n/2` where it wants `i < n/2`; `x/=2` and len(s)/2 too; compare with `<=`", Access: AccessWrite}, Low, nil},
		{"a path beside code still is", config.Risk{}, Report{Title: "off by one", Body: "in docs/guide.md the loop uses `i <= n/2`", Access: AccessWrite}, Elevated, nil},
		{"a two-letter directory is a path", config.Risk{}, Report{Title: "crash", Body: "see db/7", Access: AccessWrite}, Elevated, nil},
		{"urls and absolute paths are not repository paths", config.Risk{}, Report{Title: "x", Body: "https://example.com/a/b.go /usr/lib/python3/x.py ../../etc/passwd.txt", Access: AccessWrite}, Low, nil},
		{"reader cannot auto-fix", config.Risk{}, Report{Title: "crash", Access: AccessRead}, High, []string{"access:read"}},
		{"unknown access is no write access", config.Risk{}, Report{Title: "crash"}, High, []string{"access:"}},
		{"config lets readers be fixed", config.Risk{FixWithoutWrite: true}, Report{Title: "crash", Access: AccessNone}, Elevated, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := rules(t, c.cfg).Intake(c.rep)
			if s.Level != c.want || s.Stage != StageIntake {
				t.Fatalf("level %s stage %s, want %s; inputs %+v", s.Level, s.Stage, c.want, s.Inputs)
			}
			if got := kinds(s, High); !slices.Equal(got, c.high) {
				t.Fatalf("high inputs %q, want %q", got, c.high)
			}
			if s.High() != (c.want == High) {
				t.Fatal("High() disagrees with the level")
			}
		})
	}
}

func TestRootCauseOnlyRaises(t *testing.T) {
	r := rules(t, config.Risk{})
	low := r.Intake(Report{Title: "Totals off by a cent", Body: "src/report/total.py", Access: AccessWrite})
	if low.Level != Low {
		t.Fatalf("intake %s", low.Level)
	}
	// The low-looking report's cause lands under a sensitive path: post wins.
	post := r.RootCause(low, "rounding in the report total", nil, []Planned{{Path: "src/billing/round.py", Content: []byte("x = 1\n")}})
	if !post.High() || post.Stage != StageRootCause || !slices.Contains(kinds(post, High), "planned-file:src/billing/round.py") {
		t.Fatalf("re-score %+v", post)
	}
	// A fixable file that imports an auth module touches auth.
	imp := r.RootCause(low, "off by one", nil, []Planned{{Path: "src/report/total.py", Content: []byte("import auth.session\n")}})
	if !imp.High() || kinds(imp, High)[0] != "import:src/report/total.py: import auth.session" {
		t.Fatalf("import re-score %+v", imp)
	}
	// An unknown planned file is treated as sensitive.
	if s := r.RootCause(low, "", nil, []Planned{{Path: "docs/x.md"}}); !s.High() {
		t.Fatalf("unknown planned file: %+v", s)
	}
	// A fixable file under a payments directory, with a neutral root cause,
	// is a payment change: paths.sensitive need not list it.
	pay := r.RootCause(low, "rounding in the report total", nil, []Planned{{Path: "src/payments/round.py", Content: []byte("x = 1\n")}})
	if !pay.High() || !slices.Contains(kinds(pay, High), "planned-file:src/payments/round.py") {
		t.Fatalf("keyword path re-score %+v", pay)
	}
	// Path words match as report words do, whole (or plural): a word that
	// only contains a keyword is not one.
	if s := r.RootCause(low, "", nil, []Planned{{Path: "src/prepayment/name.py"}}); s.Level != Low {
		t.Fatalf("src/prepayment raised: %+v", s)
	}
	// A benign root cause keeps the intake's level: a high intake stays high.
	high := r.Intake(Report{Title: "sev1: totals wrong", Access: AccessWrite})
	after := r.RootCause(high, "off by one in a loop", nil, []Planned{{Path: "src/report/total.py", Content: []byte("x = 1\n")}})
	if !after.High() || len(after.Inputs) != len(high.Inputs) {
		t.Fatalf("a benign root cause lowered or dropped the intake: %+v", after)
	}
	if clean := r.RootCause(low, "off by one", nil, []Planned{{Path: "src/report/total.py", Content: []byte("x = 1\n")}}); clean.Level != Low {
		t.Fatalf("benign re-score raised: %+v", clean)
	}
	// A fix type's implied keywords are no signal in the root cause (a
	// scanner's rule id names its class of weakness), as at intake; any
	// other keyword still is, and so is a planned path naming one.
	implied := []string{"security", "injection"}
	rule := "ESLint reported security/detect-eval-with-expression at src/report/total.js:5"
	if s := r.RootCause(low, rule, implied, []Planned{{Path: "src/report/total.js"}}); s.Level != Low {
		t.Fatalf("implied keyword raised the root cause: %+v", s)
	}
	if s := r.RootCause(low, rule, nil, []Planned{{Path: "src/report/total.js"}}); !s.High() || !slices.Contains(kinds(s, High), "keyword:security") {
		t.Fatalf("without implied, security must raise: %+v", s)
	}
	if s := r.RootCause(low, "CodeQL reported go/sql-injection in the payment path", implied, []Planned{{Path: "src/report/total.go"}}); !s.High() || !slices.Contains(kinds(s, High), "keyword:payment") {
		t.Fatalf("a keyword beside an implied one must raise: %+v", s)
	}
	if s := r.RootCause(low, rule, implied, []Planned{{Path: "src/security/check.js"}}); !s.High() {
		t.Fatalf("a planned path naming an implied keyword must still raise: %+v", s)
	}
}

func TestReason(t *testing.T) {
	s := rules(t, config.Risk{}).Intake(Report{Title: "x", Labels: []string{"security"}, Access: AccessWrite})
	if got := s.Reason(); !strings.HasPrefix(got, "risk high (label `security`: a high-risk label") {
		t.Fatalf("reason %q", got)
	}
}

func TestConfigCannotShrinkDefaults(t *testing.T) {
	r := rules(t, config.Risk{Keywords: []string{"ledger"}, Labels: []string{"x"}})
	if s := r.Intake(Report{Title: "auth broken", Labels: []string{"sev1"}, Access: AccessWrite}); len(kinds(s, High)) != 2 {
		t.Fatalf("a configured set replaced the defaults: %+v", s)
	}
}

func TestInputsAreBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("src/billing/f")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(".py ")
	}
	s := rules(t, config.Risk{}).Intake(Report{Title: "x", Body: b.String(), Access: AccessWrite})
	if !s.High() || len(s.Inputs) > maxInputs {
		t.Fatalf("level %s with %d inputs", s.Level, len(s.Inputs))
	}
}

func TestParseAccess(t *testing.T) {
	for in, want := range map[string]Access{"admin": AccessWrite, "Maintain": AccessWrite, "write": AccessWrite, "triage": AccessRead, "read": AccessRead, "none": AccessNone, "owner?": AccessUnknown, "": AccessUnknown} {
		if got := ParseAccess(in); got != want {
			t.Errorf("ParseAccess(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzIntake: no input panics, the level is the maximum of the inputs, and
// adding a label or text never lowers the score (raise-only).
func FuzzIntake(f *testing.F) {
	f.Add("sev1 payments", "see src/billing/x.py:1:2", "security", "write")
	f.Add("", "", "", "")
	f.Add("a/b", "`./c/../d.go`", "P0", "read")
	r := rules(f, config.Risk{})
	f.Fuzz(func(t *testing.T, title, body, label, access string) {
		rep := Report{Title: title, Body: body, Access: ParseAccess(access)}
		s := r.Intake(rep)
		top := Low
		for _, in := range s.Inputs {
			top = max(top, in.Level)
		}
		if len(s.Inputs) < maxInputs && top != s.Level {
			t.Fatalf("level %s but inputs top out at %s", s.Level, top)
		}
		more := rep
		more.Labels = []string{label}
		more.Body = body + " " + title
		if m := r.Intake(more); m.Level < s.Level {
			t.Fatalf("adding a label and text lowered %s to %s", s.Level, m.Level)
		}
		if post := r.RootCause(s, body, nil, []Planned{{Path: title, Content: []byte(body)}}); post.Level < s.Level {
			t.Fatalf("re-score lowered %s to %s", s.Level, post.Level)
		}
	})
}

// TestLevelRoundTrip: a score survives the run report's JSON round trip
// (the report is scrubbed through its JSON form), and a level name that is
// not one of the three is refused rather than read as Low.
func TestLevelRoundTrip(t *testing.T) {
	for _, l := range []Level{Low, Elevated, High} {
		b, err := l.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Level
		if err := got.UnmarshalText(b); err != nil || got != l {
			t.Errorf("%v: round trip = %v, %v", l, got, err)
		}
	}
	var l Level = High
	if err := l.UnmarshalText([]byte("none")); err == nil || l != High {
		t.Errorf("unknown level accepted: %v, %v", l, err)
	}
}
