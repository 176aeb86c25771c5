package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpusKnown and corpusCustomer are the values the corpus engine is built
// with. The known value holds characters that URL and JSON escape, so its
// escaped forms differ from it.
var (
	corpusKnown    = "corpus/" + "known value " + `"q"&` + "0123456789"
	corpusCustomer = "Example" + "Customer-0042"
)

type section struct {
	label, name string // label/name from "-- label/name --"
	text        string
}

// readSections parses the corpus format described in testdata/corpus/README.
func readSections(t *testing.T, path string) []section {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []section
	var cur *section
	var body []string
	flush := func() {
		if cur != nil {
			cur.text = strings.Join(body, "\n")
			out = append(out, *cur)
		}
	}
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") {
			flush()
			id := strings.TrimSuffix(strings.TrimPrefix(l, "-- "), " --")
			label, name, ok := strings.Cut(id, "/")
			if !ok {
				t.Fatalf("%s: section %q has no label/name", path, id)
			}
			cur, body = &section{label: label, name: name}, nil
			continue
		}
		if cur == nil {
			continue // header comments
		}
		body = append(body, l)
	}
	flush()
	return out
}

var corpusAlphabets = map[string]string{
	"alnum":      alnumAlphabet,
	"lower":      "abcdefghijklmnopqrstuvwxyz",
	"upper":      "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"digits":     "0123456789",
	"hex":        hexAlphabet,
	"HEX":        "0123456789ABCDEF",
	"b64":        alnumAlphabet + "+/",
	"b64url":     alnumAlphabet + "-_",
	"upperdigit": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"lowerdigit": "abcdefghijklmnopqrstuvwxyz0123456789",
	"letters":    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
}

// luhnNumber returns an n-digit number starting with prefix whose Luhn
// check digit is valid.
func luhnNumber(r *rand.Rand, prefix string, n int) string {
	d := []byte(prefix + randomString(r, "0123456789", n-len(prefix)-1) + "0")
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	d[len(d)-1] = byte('0' + (10-sum%10)%10)
	return string(d)
}

func groupDigits(s, sep string, sizes ...int) string {
	var parts []string
	for _, n := range sizes {
		if n >= len(s) {
			break
		}
		parts = append(parts, s[:n])
		s = s[n:]
	}
	return strings.Join(append(parts, s), sep)
}

func fours(n int) []int {
	var s []int
	for range (n - 1) / 4 {
		s = append(s, 4)
	}
	return s
}

// expand fills a corpus template. secrets are the generated parts that must
// not survive redaction.
func expand(t *testing.T, tmpl string, r *rand.Rand) (text string, secrets []string) {
	t.Helper()
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '$')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:i])
		if strings.HasPrefix(tmpl[i:], "$$") {
			b.WriteByte('$')
			tmpl = tmpl[i+2:]
			continue
		}
		if !strings.HasPrefix(tmpl[i:], "${") {
			b.WriteByte('$')
			tmpl = tmpl[i+1:]
			continue
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			t.Fatalf("unterminated template in %q", tmpl)
		}
		spec := tmpl[i+2 : i+j]
		tmpl = tmpl[i+j+1:]
		f := strings.Split(spec, ":")
		var v string
		secret := true
		switch f[0] {
		case "":
			secret = false
		case "rand", "pub":
			n, err := strconv.Atoi(f[2])
			a, ok := corpusAlphabets[f[1]]
			if err != nil || !ok {
				t.Fatalf("bad template %q", spec)
			}
			v = randomString(r, a, n)
			secret = f[0] == "rand"
		case "uuid":
			h := randomString(r, hexAlphabet, 32)
			v = h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:]
			secret = false
		case "card", "carddash", "cardraw":
			n, _ := strconv.Atoi(f[2])
			num := luhnNumber(r, f[1], n)
			switch f[0] {
			case "card":
				v = groupDigits(num, " ", fours(n)...)
			case "carddash":
				v = groupDigits(num, "-", fours(n)...)
			default:
				v = num
			}
		case "sas":
			// an Azure SAS signature: base64 of 32 bytes, URL-encoded
			raw := make([]byte, 32)
			for k := range raw {
				raw[k] = byte(r.IntN(256))
			}
			v = url.QueryEscape(base64.StdEncoding.EncodeToString(raw))
		case "amex":
			v = groupDigits(luhnNumber(r, "37", 15), " ", 4, 6)
		case "known":
			v = corpusKnown
			if len(f) > 1 {
				v = encodeKnown(t, f[1], v)
			}
		case "customer":
			v = corpusCustomer
		default:
			t.Fatalf("unknown template %q", spec)
		}
		if secret && len(v) >= 6 {
			secrets = append(secrets, v)
		}
		b.WriteString(v)
	}
	return b.String(), secrets
}

func encodeKnown(t *testing.T, form, v string) string {
	switch form {
	case "b64":
		return base64.StdEncoding.EncodeToString([]byte(v))
	case "b64url":
		return base64.URLEncoding.EncodeToString([]byte(v))
	case "hex":
		return hex.EncodeToString([]byte(v))
	case "HEX":
		return strings.ToUpper(hex.EncodeToString([]byte(v)))
	case "url":
		return url.QueryEscape(v)
	case "json":
		j, _ := json.Marshal(v)
		return string(j[1 : len(j)-1])
	case "embedded":
		// inside a larger payload, at the third byte alignment
		return base64.StdEncoding.EncodeToString([]byte("ab" + v + "xyz"))
	}
	t.Fatalf("unknown encoding %q", form)
	return ""
}

func corpusEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Options{Known: []string{corpusKnown}, CustomerIDs: []string{corpusCustomer}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCorpus reports recall and false positives per rule over the labelled
// corpus, and requires all positives found and no false positive.
func TestCorpus(t *testing.T) {
	e := corpusEngine(t)
	r := rand.New(rand.NewPCG(2026, 3))
	pos := readSections(t, "testdata/corpus/positives.txt")
	neg := readSections(t, "testdata/corpus/negatives.txt")

	type tally struct{ pos, found, fp int }
	stats := map[string]*tally{}
	get := func(rule string) *tally {
		if stats[rule] == nil {
			stats[rule] = &tally{}
		}
		return stats[rule]
	}
	for _, s := range pos {
		text, secrets := expand(t, s.text, r)
		st := get(s.label)
		st.pos++
		fs, err := e.Detect(text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == s.label }) {
			t.Errorf("positive %s/%s: not found by %s; findings %v in\n%s", s.label, s.name, s.label, fs, text)
			continue
		}
		out, _, err := e.Redact(text)
		if err != nil {
			t.Fatal(err)
		}
		leaked := false
		for _, sec := range secrets {
			if strings.Contains(out, sec) {
				t.Errorf("positive %s/%s: %q survived redaction:\n%s", s.label, s.name, sec, out)
				leaked = true
			}
		}
		if !leaked {
			st.found++
		}
	}
	for _, s := range neg {
		text, _ := expand(t, s.text, r)
		fs, err := e.Detect(text)
		if err != nil {
			t.Fatal(err)
		}
		fired := map[string]bool{}
		for _, f := range fs {
			if !fired[f.Rule] {
				fired[f.Rule] = true
				get(f.Rule).fp++
			}
			t.Errorf("negative %s/%s: %s reported %q", s.label, s.name, f.Rule, text[f.Start:f.End])
		}
	}
	rules := make([]string, 0, len(stats))
	for r := range stats {
		rules = append(rules, r)
	}
	slices.Sort(rules)
	t.Logf("%-26s %9s %7s %12s", "rule", "positives", "recall", "FP rate")
	for _, rule := range rules {
		st := stats[rule]
		recall := "-"
		if st.pos > 0 {
			recall = fmt.Sprintf("%.0f%%", 100*float64(st.found)/float64(st.pos))
		}
		t.Logf("%-26s %9d %7s %5d/%d (%.1f%%)", rule, st.pos, recall, st.fp, len(neg), 100*float64(st.fp)/float64(len(neg)))
	}
	// Every shape rule has positives.
	for _, ri := range Rules() {
		if stats[ri.ID] == nil || stats[ri.ID].pos == 0 {
			t.Errorf("rule %s has no positive in the corpus", ri.ID)
		}
	}
}
