package gitleaksdiff

// Inputs for the benchmarks: a clean synthetic `git log -p` and the
// hostile shapes. Both are deterministic (fixed PCG seeds).

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexDigit = "0123456789abcdef"
)

func randFrom(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// diffGen writes a synthetic unified diff, commit by commit.
type diffGen struct {
	r *rand.Rand
	b strings.Builder
}

var (
	nouns = strings.Fields("request response handler client server config cache queue worker session user account order invoice payment report event message batch record index schema table column field value buffer stream reader writer parser token lexer node tree graph edge route path file module package build release version policy rule check result error retry limit budget timer clock deadline context logger metric span trace")
	verbs = strings.Fields("load save parse render build fetch send handle resolve validate compute merge split flush close open read write update delete create list find apply check retry encode decode format scan emit record")
	adjs  = strings.Fields("new old raw safe fast slow next last first empty full local remote pending active stale valid default current partial")
	prose = strings.Fields("the handler now retries a request when the upstream returns a transient error and records each attempt so operators can see why a run took longer than expected this keeps the previous cache entry until the new one is written and avoids a race between two workers that read the same file fixes the flaky test on slow machines by waiting for the server to be ready before sending the first request")
	names = []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov", "Ken Thompson", "Margaret Hamilton", "Dennis Ritchie", "Frances Allen"}
	dirs  = strings.Fields("internal cmd pkg src lib app api web server client tools scripts tests docs")

	nounsAdjs = append(slices.Clip(nouns), adjs...)
)

func (g *diffGen) camel(parts int) string {
	s := pick(g.r, verbs)
	for range parts - 1 {
		w := pick(g.r, nounsAdjs)
		s += strings.ToUpper(w[:1]) + w[1:]
	}
	return s
}

func (g *diffGen) snake(parts int) string {
	s := []string{pick(g.r, verbs)}
	for range parts - 1 {
		s = append(s, pick(g.r, nouns))
	}
	return strings.Join(s, "_")
}

func (g *diffGen) pascal(parts int) string {
	c := g.camel(parts)
	return strings.ToUpper(c[:1]) + c[1:]
}

func (g *diffGen) sentence(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = pick(g.r, prose)
	}
	return strings.Join(w, " ")
}

func (g *diffGen) sha() string { return randFrom(g.r, hexDigit, 40) }

func (g *diffGen) uuid() string {
	h := randFrom(g.r, hexDigit, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[g.r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

// pngDataURI is a data: URI holding a small PNG-like payload: a real PNG
// signature and IHDR chunk header, then random bytes, base64-encoded.
func (g *diffGen) pngDataURI() string {
	n := 120 + g.r.IntN(900)
	b := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, n)...)
	for i := 16; i < len(b); i++ {
		b[i] = byte(g.r.IntN(256))
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
}

func (g *diffGen) integrity() string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return "sha512-" + base64.StdEncoding.EncodeToString(b)
}

func (g *diffGen) goSum() string {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return "h1:" + base64.StdEncoding.EncodeToString(b)
}

// goLine, pyLine and jsLine return one line of source (without the diff
// marker).
func (g *diffGen) goLine() string {
	switch g.r.IntN(14) {
	case 0:
		return fmt.Sprintf("func (s *%s) %s(ctx context.Context, %s *%s) error {", g.pascal(1), g.camel(2), pick(g.r, nouns), g.pascal(2))
	case 1:
		return fmt.Sprintf("\t%s, err := s.%s(ctx, %s)", g.camel(2), g.camel(2), pick(g.r, nouns))
	case 2:
		return "\tif err != nil {"
	case 3:
		return fmt.Sprintf("\t\treturn fmt.Errorf(\"%s %s: %%w\", err)", pick(g.r, verbs), pick(g.r, nouns))
	case 4:
		return "\t}"
	case 5:
		return fmt.Sprintf("\t// %s", g.sentence(8+g.r.IntN(8)))
	case 6:
		return fmt.Sprintf("\t%s %s `json:\"%s,omitempty\"`", g.pascal(2), pick(g.r, []string{"string", "int", "bool", "[]string", "time.Duration", "*Config"}), g.snake(2))
	case 7:
		return fmt.Sprintf("\t%s := uuid.MustParse(%q)", g.camel(2), g.uuid())
	case 8:
		return fmt.Sprintf("\ttoken := os.Getenv(%q)", strings.ToUpper(g.snake(2))+"_TOKEN")
	case 9:
		return fmt.Sprintf("\tfor _, %s := range %s.%s {", pick(g.r, nouns), pick(g.r, nouns), g.pascal(2))
	case 10:
		return fmt.Sprintf("\tlog.Printf(\"%s: %%d %s\", len(%s))", g.sentence(4), pick(g.r, nouns), pick(g.r, nouns))
	case 11:
		return fmt.Sprintf("\t\t%s: %d,", g.pascal(2), g.r.IntN(10000))
	case 12:
		return fmt.Sprintf("\t%q,", "github.com/"+pick(g.r, nouns)+"/"+pick(g.r, nouns)+"/"+pick(g.r, dirs))
	default:
		return ""
	}
}

func (g *diffGen) pyLine() string {
	switch g.r.IntN(13) {
	case 0:
		return fmt.Sprintf("def %s(self, %s, %s=None):", g.snake(3), pick(g.r, nouns), pick(g.r, nouns))
	case 1:
		return fmt.Sprintf("    %s = self.%s(%s)", g.snake(2), g.snake(2), pick(g.r, nouns))
	case 2:
		return fmt.Sprintf("    password = os.environ[%q]", strings.ToUpper(g.snake(2))+"_PASSWORD")
	case 3:
		return fmt.Sprintf("    # %s", g.sentence(6+g.r.IntN(10)))
	case 4:
		return fmt.Sprintf("    logger.info(\"%s %%s\", %s)", g.sentence(5), pick(g.r, nouns))
	case 5:
		return fmt.Sprintf("%s_ID = %q", strings.ToUpper(g.snake(2)), g.uuid())
	case 6:
		return fmt.Sprintf("    assert response.status_code == %d", pick(g.r, []int{200, 201, 204, 400, 404}))
	case 7:
		return fmt.Sprintf("    if not %s:", pick(g.r, nouns))
	case 8:
		return fmt.Sprintf("        raise %sError(%q)", g.pascal(1), g.sentence(5))
	case 9:
		return fmt.Sprintf("from %s.%s import %s", pick(g.r, dirs), pick(g.r, nouns), g.pascal(2))
	case 10:
		return fmt.Sprintf("    return {%q: %s, %q: %d}", pick(g.r, nouns), pick(g.r, nouns), pick(g.r, nouns), g.r.IntN(100))
	case 11:
		return fmt.Sprintf("class %s(%s):", g.pascal(2), pick(g.r, []string{"object", "Exception", "TestCase", "BaseModel"}))
	default:
		return ""
	}
}

func (g *diffGen) jsLine() string {
	switch g.r.IntN(13) {
	case 0:
		return fmt.Sprintf("export function %s(%s, %s) {", g.camel(3), pick(g.r, nouns), pick(g.r, nouns))
	case 1:
		return fmt.Sprintf("  const %s = await %s(%s);", g.camel(2), g.camel(2), pick(g.r, nouns))
	case 2:
		return "  const apiKey = process.env.API_KEY;"
	case 3:
		return fmt.Sprintf("  // %s", g.sentence(6+g.r.IntN(10)))
	case 4:
		return fmt.Sprintf("import { %s, %s } from './%s/%s.js';", g.camel(2), g.camel(2), pick(g.r, dirs), pick(g.r, nouns))
	case 5:
		return fmt.Sprintf("const %sIcon = %q;", g.camel(1), g.pngDataURI())
	case 6:
		return fmt.Sprintf("  id: %q,", g.uuid())
	case 7:
		return fmt.Sprintf("  if (!%s) throw new Error(%q);", pick(g.r, nouns), g.sentence(4))
	case 8:
		return "  }"
	case 9:
		return fmt.Sprintf("  return %s.map((%s) => %s.%s);", pick(g.r, nouns), pick(g.r, nouns), pick(g.r, nouns), g.camel(2))
	case 10:
		return fmt.Sprintf("  expect(%s).toEqual(%d);", g.camel(2), g.r.IntN(1000))
	case 11:
		// a label, not a credential: the key names no credential
		return fmt.Sprintf("  %sLabel: %q,", g.camel(1), g.sentence(3))
	default:
		return ""
	}
}

// lockLines is a package-lock.json entry: resolved URL and integrity.
func (g *diffGen) lockLines() []string {
	p := pick(g.r, nouns) + "-" + pick(g.r, verbs)
	v := fmt.Sprintf("%d.%d.%d", g.r.IntN(9), g.r.IntN(30), g.r.IntN(20))
	return []string{
		fmt.Sprintf("    \"node_modules/%s\": {", p),
		fmt.Sprintf("      \"version\": %q,", v),
		fmt.Sprintf("      \"resolved\": \"https://registry.npmjs.org/%s/-/%s-%s.tgz\",", p, p, v),
		fmt.Sprintf("      \"integrity\": %q,", g.integrity()),
		"      \"dev\": true",
		"    },",
	}
}

func (g *diffGen) goSumLines() []string {
	m := "github.com/" + pick(g.r, nouns) + "/" + pick(g.r, nouns)
	v := fmt.Sprintf("v%d.%d.%d", g.r.IntN(3), g.r.IntN(30), g.r.IntN(20))
	return []string{
		fmt.Sprintf("%s %s %s=", m, v, strings.TrimSuffix(g.goSum(), "=")),
		fmt.Sprintf("%s %s/go.mod %s=", m, v, strings.TrimSuffix(g.goSum(), "=")),
	}
}

func (g *diffGen) commit() {
	b := &g.b
	fmt.Fprintf(b, "commit %s\n", g.sha())
	if g.r.IntN(8) == 0 {
		fmt.Fprintf(b, "Merge: %s %s\n", g.sha()[:7], g.sha()[:7])
	}
	who := pick(g.r, names)
	fmt.Fprintf(b, "Author: %s <%s@example.com>\n", who, strings.ToLower(strings.ReplaceAll(who, " ", ".")))
	fmt.Fprintf(b, "Date:   %s Mar %d %02d:%02d:%02d 2026 +0000\n\n", pick(g.r, []string{"Mon", "Tue", "Wed", "Thu", "Fri"}), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60))
	fmt.Fprintf(b, "    %s %s\n\n    %s.\n", pick(g.r, verbs), g.sentence(5), g.sentence(14+g.r.IntN(12)))
	if g.r.IntN(4) == 0 {
		fmt.Fprintf(b, "\n    This reverts commit %s.\n", g.sha())
	}
	fmt.Fprintf(b, "\n    Refs: #%d\n\n", 1+g.r.IntN(9000))
	for range 1 + g.r.IntN(3) {
		g.file()
	}
}

func (g *diffGen) file() {
	b := &g.b
	var (
		path string
		line func() string
	)
	kind := g.r.IntN(10)
	dir := pick(g.r, dirs) + "/" + pick(g.r, nouns)
	switch {
	case kind < 4:
		path, line = dir+"/"+g.snake(2)+".go", g.goLine
	case kind < 7:
		path, line = dir+"/"+g.snake(2)+".py", g.pyLine
	case kind < 9:
		path, line = dir+"/"+g.camel(2)+".js", g.jsLine
	default:
		path = pick(g.r, []string{"package-lock.json", "go.sum"})
	}
	fmt.Fprintf(b, "diff --git a/%s b/%s\n", path, path)
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(b, "index %s..%s 100644\n", g.sha(), g.sha()) // --full-index
	} else {
		fmt.Fprintf(b, "index %s..%s 100644\n", g.sha()[:7], g.sha()[:7])
	}
	fmt.Fprintf(b, "--- a/%s\n+++ b/%s\n", path, path)
	for range 1 + g.r.IntN(3) {
		var lines []string
		if line == nil {
			for range 1 + g.r.IntN(4) {
				if path == "go.sum" {
					lines = append(lines, g.goSumLines()...)
				} else {
					lines = append(lines, g.lockLines()...)
				}
			}
		} else {
			for range 4 + g.r.IntN(16) {
				lines = append(lines, line())
			}
		}
		start := 1 + g.r.IntN(800)
		fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@ %s\n", start, len(lines), start, len(lines), g.camel(2))
		for _, l := range lines {
			switch g.r.IntN(5) {
			case 0:
				b.WriteString("-")
			case 1, 2:
				b.WriteString("+")
			default:
				b.WriteString(" ")
			}
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// cleanDiff returns n bytes of synthetic `git log -p` output: Go, Python
// and JavaScript hunks, package-lock.json and go.sum hunks, commit and
// (abbreviated or full) index SHAs, UUIDs, PNG data: URIs, npm integrity
// and go.sum hashes, and code that reads credentials from the environment.
// It holds no secret. It is cut at a line end at or before n bytes.
func cleanDiff(n int) string {
	g := &diffGen{r: rand.New(rand.NewPCG(2026, 3))}
	g.b.Grow(n + 64<<10)
	for g.b.Len() < n {
		g.commit()
	}
	s := g.b.String()[:n]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		s = s[:i+1]
	}
	return s
}

var cleanDiff10MB = sync.OnceValue(func() string { return cleanDiff(10 << 20) })

// Hostile shapes (notes/anchors-secrets.md §1.5 and §9.3): inputs that
// made scanners super-linear. Each builds about n bytes.

type shape struct {
	name string
	gen  func(n int) string
}

// fixrailPrefixes are the literal prefixes of the token formats the engine
// documents (internal/redact Rules), written from the providers' formats.
var fixrailPrefixes = []string{
	"gh" + "p_", "gh" + "o_", "gh" + "u_", "gh" + "s_", "gh" + "r_", "github" + "_pat_", "gl" + "pat-",
	"xo" + "xb-", "xo" + "xp-", "xa" + "pp-", "sk" + "_live_", "rk" + "_live_", "AK" + "IA", "AS" + "IA",
	"AI" + "za", "sk" + "-", "sk" + "-ant-", "sk" + "-proj-", "np" + "m_", "pypi" + "-AgEIcHlwaS5vcmc",
	"SG" + ".", "S" + "K", "ey" + "J",
}

// keywordHeader is a ~2 KB line naming every gitleaks keyword and every
// fixrail prefix, so no prefilter can skip what follows.
func keywordHeader(keywords []string) string {
	var b strings.Builder
	for _, k := range keywords {
		b.WriteString(k + " ")
	}
	for _, p := range fixrailPrefixes {
		b.WriteString(p + " ")
	}
	b.WriteString("password= secret: token= api_key: auth= credential= -----BEGIN PRIVATE KEY----- ://user:pass@ sha512- h1: base64,\n")
	return b.String()
}

func repeatTo(unit string, n int) string {
	if unit == "" || n <= 0 {
		return ""
	}
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// hostileShapes builds the shapes; keywords are gitleaks' rule keywords.
func hostileShapes(keywords []string) []shape {
	keywords = slices.Sorted(slices.Values(keywords))
	header := keywordHeader(keywords)
	const proseText = "The quick brown fox jumps over the lazy dog while the reviewers read the pull request and they ask about the task. "
	return []shape{
		{"kw-header-random", func(n int) string {
			return header + randFrom(rand.New(rand.NewPCG(1, 1)), alnum, n-len(header))
		}},
		{"kw-header-prose", func(n int) string { return header + repeatTo(proseText, n-len(header)) }},
		{"keyword-flood", func(n int) string { return repeatTo(strings.Join(keywords, " ")+" ", n) }},
		{"key-repeat", func(n int) string { return repeatTo("key=", n) }},
		{"api-key-lines", func(n int) string {
			r := rand.New(rand.NewPCG(2, 2))
			var b strings.Builder
			for b.Len() < n {
				fmt.Fprintf(&b, "api_key = %q\n", randFrom(r, alnum, 24))
			}
			return b.String()[:n]
		}},
		{"many-findings", func(n int) string {
			r := rand.New(rand.NewPCG(3, 3))
			var b strings.Builder
			for b.Len() < n {
				b.WriteString("gh" + "p_" + randFrom(r, alnum, 36) + "\n")
			}
			return b.String()[:n]
		}},
		{"begin-no-end", func(n int) string {
			return repeatTo("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n", n)
		}},
		{"nested-base64", func(n int) string {
			v := "secret_token = " + randFrom(rand.New(rand.NewPCG(4, 4)), alnum, 40)
			var layers []string
			for range 6 {
				v = base64.StdEncoding.EncodeToString([]byte(v + " " + header[:80]))
				layers = append(layers, v)
			}
			return repeatTo(strings.Join(layers, "\n")+"\n", n)
		}},
		{"long-line-random", func(n int) string {
			return randFrom(rand.New(rand.NewPCG(5, 5)), alnum+"=:._-/+'\"", n)
		}},
		{"long-line-assign", func(n int) string { return repeatTo("a=", n-1) + "." }},
		{"prefix-repeat", func(n int) string { return repeatTo("gh"+"p_", n) }},
		{"jwt-run", func(n int) string { return repeatTo("ey"+"J", n-8) + ".eyJab." }},
		{"zero-width", func(n int) string { return repeatTo("g\u200bh\u200dp_\ufeffAKIA\u00ad api_key=\u200b", n) }},
	}
}
