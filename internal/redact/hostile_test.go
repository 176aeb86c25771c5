package redact

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Hostile inputs: shapes that made other scanners quadratic or worse
// (notes/anchors-secrets.md §1.5, §9). Each must finish in linear time.

// hostileKnown is the known value the nested-base64 shape hides.
var hostileKnown = "hostile-" + "known-" + "value-0123456789"

// keywordHeader lists every prefix and keyword the engine reacts to, so no
// prefilter can skip the text after it.
func keywordHeader() string {
	tokenRulesOnce.Do(initTokenRules)
	var b strings.Builder
	for _, r := range tokenRules {
		for _, p := range r.prefixes {
			b.WriteString(p + " ")
		}
	}
	for _, w := range credentialWords {
		b.WriteString(w + "= " + w + ": ")
	}
	for w := range digestWords {
		b.WriteString(w + " ")
	}
	b.WriteString("-----BEGIN PRIVATE KEY----- ://user:pass@ sha512- h1: base64, ")
	for _, w := range []string{"access", "api", "key", "ey", "sk", "s.", "creds", "bearer", "basic", "jwt"} {
		b.WriteString(w + " ")
	}
	b.WriteString("\n")
	return b.String()
}

func repeatTo(unit string, n int) string {
	if len(unit) == 0 {
		return ""
	}
	s := strings.Repeat(unit, n/len(unit)+1)
	return s[:n]
}

func randomString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnumAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexAlphabet   = "0123456789abcdef"
	prose         = "The quick brown fox jumps over the lazy dog while the committee reviews the pull request and its tokenizer settings. "
)

// hostileShape builds one shape of about n bytes.
type hostileShape struct {
	name string
	gen  func(n int) string
}

var hostileShapes = []hostileShape{
	{"kw-header-random", func(n int) string {
		h := keywordHeader()
		return h + randomString(rand.New(rand.NewPCG(1, 2)), alnumAlphabet, n-len(h))
	}},
	{"kw-header-prose", func(n int) string {
		h := keywordHeader()
		return h + repeatTo(prose, n-len(h))
	}},
	{"api-key-lines", func(n int) string {
		r := rand.New(rand.NewPCG(3, 4))
		var b strings.Builder
		for b.Len() < n {
			fmt.Fprintf(&b, "api_key = %q\n", randomString(r, alnumAlphabet, 14))
		}
		return b.String()[:n]
	}},
	{"char-literal-lines", func(n int) string {
		// every value asks which file of a diff it is in
		r := rand.New(rand.NewPCG(9, 10))
		var b strings.Builder
		for b.Len() < n {
			fmt.Fprintf(&b, "--- a/f.c\n+++ b/f%d.c\n@@ -1 +1 @@\n+api_key = '%s';\n+++ b/x.c\n", b.Len(), randomString(r, alnumAlphabet, 14))
		}
		return b.String()[:n]
	}},
	{"token-lines", func(n int) string {
		r := rand.New(rand.NewPCG(5, 6))
		var b strings.Builder
		for b.Len() < n {
			b.WriteString("token: " + randomString(r, alnumAlphabet, 40) + "\n")
		}
		return b.String()[:n]
	}},
	{"long-line", func(n int) string { return repeatTo("a=", n-1) + "." }},
	{"long-line-random", func(n int) string {
		return randomString(rand.New(rand.NewPCG(7, 8)), alnumAlphabet+"=:._-/+'\"", n)
	}},
	{"prefix-repeat", func(n int) string { return repeatTo("gh"+"p_", n) }},
	{"all-prefixes", func(n int) string {
		tokenRulesOnce.Do(initTokenRules)
		var b strings.Builder
		for _, r := range tokenRules {
			for _, p := range r.prefixes {
				b.WriteString(p)
			}
		}
		b.WriteString("eyJ.ey.-----BEGIN ://@")
		return repeatTo(b.String(), n)
	}},
	{"jwt-run", func(n int) string { return repeatTo("ey"+"J", n-8) + ".eyJabc." }},
	{"nested-base64", func(n int) string {
		v := hostileKnown
		var layers []string
		for range 6 {
			v = base64.StdEncoding.EncodeToString([]byte(v + " " + keywordHeader()[:64]))
			layers = append(layers, v)
		}
		return repeatTo(strings.Join(layers, "\n")+"\n", n)
	}},
	{"pem-near-miss", func(n int) string {
		unit := "-----BEGIN RSA PRIVATE KEY----\n" + "-----BEGIN PRIVATE KEY-----" + "-----BEGIN ENCRYPTED PRIVATE KE-----\n" +
			"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" + "-----END PUBLIC KEY-----\n"
		return repeatTo(unit, n)
	}},
	{"keyword-flood", func(n int) string {
		return repeatTo("password=token:secret=api_key:auth=credential:passwd=private_key:access_key= ", n)
	}},
	{"keyword-soup", func(n int) string {
		var b strings.Builder
		for _, w := range credentialWords {
			b.WriteString(w)
		}
		return repeatTo(b.String()+"=", n)
	}},
	{"many-findings", func(n int) string {
		r := rand.New(rand.NewPCG(9, 10))
		var b strings.Builder
		for b.Len() < n {
			b.WriteString("gh" + "p_" + randomString(r, alnumAlphabet, 36) + " ")
		}
		return b.String()[:n]
	}},
	{"login-flood", func(n int) string { return repeatTo("docker login -u u -p docker ", n) }},
	{"login-no-p", func(n int) string { return repeatTo("login ", n) }},
	{"sas-flood", func(n int) string { return repeatTo("?sv=1&sig="+strings.Repeat("A", 43)+"%3D", n) }},
	{"url-flood", func(n int) string { return repeatTo("https://user:p4ssw0rd-"+"x@host a://b:c@d ://:@ ", n) }},
	{"quote-flood", func(n int) string { return repeatTo(`password="abc token='def secret=`+"`"+`ghi `, n) }},
	{"card-flood", func(n int) string { return repeatTo("4111 1111 1111 1111 ", n) }},
	{"digit-groups", func(n int) string { return repeatTo("4111 ", n) }},
	{"zero-width", func(n int) string { return repeatTo("g\u200bh\u200dp_\ufeffAKIA\u00ad", n) }},
	{"hex-shas", func(n int) string {
		r := rand.New(rand.NewPCG(11, 12))
		var b strings.Builder
		for b.Len() < n {
			b.WriteString("commit " + randomString(r, hexAlphabet, 40) + "\n")
		}
		return b.String()[:n]
	}},
}

func hostileEngine(tb testing.TB, maxInput int) *Engine {
	tb.Helper()
	e, err := New(Options{Known: []string{hostileKnown}, CustomerIDs: []string{"ACME-Corp-0001"}, MaxInput: maxInput})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

const hostileChildEnv = "REDACT_HOSTILE_CHILD"

// TestHostile runs each shape at 100 KB and 1 MB in a child process with a
// hard timeout, so that a regression to super-linear time fails the test
// instead of hanging it.
func TestHostile(t *testing.T) {
	if shape := os.Getenv(hostileChildEnv); shape != "" {
		hostileChild(t, shape)
		return
	}
	for _, sh := range hostileShapes {
		t.Run(sh.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), hostileTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostile$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), hostileChildEnv+"="+sh.name)
			cmd.WaitDelay = time.Second
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("shape %s did not finish within %v", sh.name, hostileTimeout)
			}
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "hostile ") {
					t.Log(l)
				}
			}
		})
	}
}

// hostileTimeout is the hard bound on one shape's child process, which
// times both sizes and both modes.
const hostileTimeout = 10 * time.Second

// hostileChild is the child's side: it times Redact and Detect on one
// shape and fails past a per-call bound of a second of CPU time
// (notes/anchors-secrets §9). The goal, 50 ms per MB, is reported here and
// by the benchmark; on a shared CI box it is not asserted.
func hostileChild(t *testing.T, name string) {
	var sh hostileShape
	for _, s := range hostileShapes {
		if s.name == name {
			sh = s
		}
	}
	if sh.gen == nil {
		t.Fatalf("unknown shape %q", name)
	}
	sizes := []int{100 << 10, 1 << 20}
	if raceEnabled {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		in := sh.gen(n)
		e := hostileEngine(t, 2<<20)
		start, cpu := time.Now(), cpuTime()
		out, fs, err := e.Redact(in)
		redactTime, redactCPU := time.Since(start), cpuTime()-cpu
		if err != nil {
			t.Fatalf("%s %d: Redact: %v", name, n, err)
		}
		start, cpu = time.Now(), cpuTime()
		if _, err := e.Detect(in); err != nil {
			t.Fatalf("%s %d: Detect: %v", name, n, err)
		}
		detectTime, detectCPU := time.Since(start), cpuTime()-cpu
		start = time.Now()
		Candidates(in[:min(len(in), 64<<10)])
		candTime := time.Since(start)
		if strings.Contains(out, hostileKnown) {
			t.Fatalf("%s %d: known value survived", name, n)
		}
		fmt.Printf("hostile %-18s %5d KB  redact %7.2f ms (cpu %7.2f)  detect %7.2f ms (cpu %7.2f)  candidates(64KB) %6.2f ms  findings %d\n",
			name, n>>10, ms(redactTime), ms(redactCPU), ms(detectTime), ms(detectCPU), ms(candTime), len(fs))
		// Default MaxInput: the tail is withheld, never passed through.
		d := hostileEngine(t, 0)
		out, _, err = d.Redact(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) > DefaultMaxInput && !strings.Contains(out, "[WITHHELD by fixrail: ") {
			t.Fatalf("%s %d: oversize input not withheld", name, n)
		}
		// CPU time, not wall time: a loaded CI box must not fail this.
		if limit := time.Second; redactCPU > limit || detectCPU > limit {
			t.Fatalf("%s %d: took %v / %v of CPU, over %v", name, n, redactCPU, detectCPU, limit)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func BenchmarkHostile(b *testing.B) {
	for _, sh := range hostileShapes {
		in := sh.gen(1 << 20)
		e := hostileEngine(b, 2<<20)
		b.Run(sh.name+"/redact", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, _, err := e.Redact(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sh.name+"/detect", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := e.Detect(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
