package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
)

func fuzzSeeds(f *testing.F, add func(text string)) {
	for _, r := range Rules() {
		add("before " + r.Example + " after")
	}
	for _, s := range []string{
		"",
		"password=" + "correct-horse-battery",
		"postgres://u:p4ss" + "w0rd@h/x",
		"commit 0123456789abcdef0123456789abcdef01234567",
		"[REDACTED:github-pat] token=[REDACTED:credential-assignment]",
		"\n[WITHHELD by fixrail: 12 bytes over the scan limit]",
		"-----BEGIN " + "PRIVATE KEY-----\nMIIE\n",
		"a=a=a=a=a=a=.",
		"g\u200bh\u00adp_\ufeff",
		"4111 1111 1111 1111",
		"\xff\xfe invalid utf-8 \xc2",
	} {
		add(s)
	}
	for _, sh := range hostileShapes {
		g := sh.gen(8 << 10)
		add(g[:512])
		add(g[len(g)-512:])
	}
}

// FuzzRedact: no input makes Redact panic or run out of its default budget;
// a planted known value and its base64, hex and URL-safe base64 never
// survive; redacting the output again finds nothing and changes nothing.
func FuzzRedact(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s, "planted-secret-value", uint16(len(s)/2)) })
	f.Add("x", "REDACTED", uint16(0))
	f.Add("ab[REDA", "cd[REDACTED:x", uint16(2))
	f.Fuzz(func(t *testing.T, text, secret string, at uint16) {
		if len(secret) < minKnownLen {
			secret += "-pad-pad"
		}
		e, err := New(Options{Known: []string{secret}, MaxInput: 1 << 20})
		if err != nil {
			return // refused: too short or would collide with a marker
		}
		i := int(at) % (len(text) + 1)
		in := text[:i] + secret + text[i:] + " " + base64.StdEncoding.EncodeToString([]byte(secret)) +
			" " + hex.EncodeToString([]byte(secret)) + " " + base64.RawURLEncoding.EncodeToString([]byte(secret))
		out, fs, err := e.Redact(in)
		if err != nil {
			t.Fatalf("Redact: %v", err)
		}
		checkFindings(t, in, fs)
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))} {
			if strings.Contains(out, form) {
				t.Fatalf("output holds the known value or an encoding of it (%q):\n%q", form, out)
			}
		}
		again, fs2, err := e.Redact(out)
		if err != nil {
			t.Fatalf("Redact(Redact): %v", err)
		}
		if len(fs2) != 0 || again != out {
			t.Fatalf("not idempotent: findings %v\nonce  %q\ntwice %q", fs2, out, again)
		}
		if d, err := e.Detect(out); err != nil || len(d) != 0 {
			t.Fatalf("Detect(Redact(x)) = %v, %v", d, err)
		}
	})
}

// FuzzDetect: Detect never panics, its findings are well formed, and
// Redact covers every span Detect reports.
func FuzzDetect(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s) })
	e, err := New(Options{Known: []string{"fuzz-known-value"}, CustomerIDs: []string{"CUST-0042"}, MaxInput: 1 << 12})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fs, err := e.Detect(text)
		if err != nil {
			t.Fatalf("Detect: %v", err)
		}
		checkFindings(t, text, fs)
		out, rfs, err := e.Redact(text)
		if err != nil {
			t.Fatalf("Redact: %v", err)
		}
		checkFindings(t, text, rfs)
		for _, f := range fs {
			if !slices.ContainsFunc(rfs, func(r Finding) bool { return r.Start <= f.Start && f.End <= r.End }) {
				t.Fatalf("Detect finding %+v not covered by Redact's %v", f, rfs)
			}
		}
		if len(fs) == 0 && out != text {
			t.Fatalf("no finding but output changed")
		}
		Candidates(text)
	})
}

// FuzzCandidates: candidates are never masked, never short, and always
// accepted by New.
func FuzzCandidates(f *testing.F) {
	fuzzSeeds(f, func(s string) { f.Add(s) })
	f.Add(`API_KEY = "sk-****"`)
	f.Add(`token: ghp_ab12....`)
	f.Fuzz(func(t *testing.T, snippet string) {
		for _, c := range Candidates(snippet) {
			if len(c) < minKnownLen || maskedCandidate(c) {
				t.Fatalf("bad candidate %q", c)
			}
			if _, err := New(Options{Known: []string{c}}); err != nil {
				t.Fatalf("candidate %q refused: %v", c, err)
			}
		}
	})
}

// knownRules is built on first use: Rules is filled by init, after
// package variables.
var knownRules = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, r := range allRuleIDs() {
		m[r] = true
	}
	return m
})

func checkFindings(t *testing.T, in string, fs []Finding) {
	t.Helper()
	prev := 0
	for _, f := range fs {
		if f.Start < prev || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("malformed findings over %d bytes: %v", len(in), fs)
		}
		if !knownRules()[f.Rule] {
			t.Fatalf("unknown rule %q", f.Rule)
		}
		prev = f.End
	}
}
