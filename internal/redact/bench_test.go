package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// cleanDiff builds a synthetic `git log -p` of about n bytes that holds no
// secret: commit and index SHAs, authors, dates, prose, Go/Python/JS code
// that reads credentials from the environment, lockfile integrity hashes,
// UUIDs and paths. Nothing in it should be redacted.
func cleanDiff(n int) string {
	r := rand.New(rand.NewPCG(42, 42))
	words := strings.Fields("the handler now retries the request when the upstream returns a transient error and records the attempt count in the run log so operators can see why a fix took longer than expected while the cache keeps its previous entry")
	idents := []string{"userID", "retryCount", "parseConfig", "httpClient", "tokenSource", "authHeader", "requestContext", "maxAttempts", "handleWebhookEvent", "secretStore", "passwordHash", "credentialProvider"}
	sha := func() string { return randomString(r, hexAlphabet, 40) }
	uuid := func() string {
		h := randomString(r, hexAlphabet, 32)
		return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
	}
	sentence := func(k int) string {
		var s []string
		for range k {
			s = append(s, words[r.IntN(len(words))])
		}
		return strings.Join(s, " ")
	}
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "commit %s\nAuthor: Dev Person <dev%d@example.com>\nDate:   Mon Jan %d 10:%02d:00 2026 +0000\n\n", sha(), r.IntN(50), 1+r.IntN(28), r.IntN(60))
		fmt.Fprintf(&b, "    %s\n\n    %s.\n    Refs: #%d, reverts %s\n\n", sentence(6), sentence(18), r.IntN(9000), sha()[:12])
		path := fmt.Sprintf("internal/%s/%s.go", words[r.IntN(len(words))], idents[r.IntN(len(idents))])
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n@@ -%d,7 +%d,9 @@ func %s() {\n",
			path, path, sha()[:7], sha()[:7], path, path, r.IntN(400), r.IntN(400), idents[r.IntN(len(idents))])
		for range 6 + r.IntN(10) {
			switch r.IntN(12) {
			case 0:
				b.WriteString("+\ttoken := os.Getenv(\"GITHUB_TOKEN\")\n")
			case 1:
				b.WriteString("+    password = os.environ[\"DB_PASSWORD\"]\n")
			case 2:
				b.WriteString("+  const apiKey = process.env.API_KEY;\n")
			case 3:
				fmt.Fprintf(&b, "+\t%s := %s(ctx, %s)\n", idents[r.IntN(len(idents))], idents[r.IntN(len(idents))], idents[r.IntN(len(idents))])
			case 4:
				fmt.Fprintf(&b, "+\t// %s\n", sentence(10))
			case 5:
				fmt.Fprintf(&b, "+\t\"integrity\": \"sha512-%s==\",\n", randomString(r, alnumAlphabet+"+/", 86))
			case 6:
				fmt.Fprintf(&b, "+\trequestID := %q\n", uuid())
			case 7:
				fmt.Fprintf(&b, "+\tgithub.com/example/mod%d v1.%d.0 h1:%s=\n", r.IntN(99), r.IntN(30), randomString(r, alnumAlphabet+"+/", 43))
			case 8:
				fmt.Fprintf(&b, "+\tuses: actions/checkout@%s # v4\n", sha())
			case 9:
				fmt.Fprintf(&b, "-\tif err := %s(%s); err != nil {\n", idents[r.IntN(len(idents))], idents[r.IntN(len(idents))])
			case 10:
				fmt.Fprintf(&b, " \treturn fmt.Errorf(\"%s: %%w\", err)\n", sentence(4))
			case 11:
				fmt.Fprintf(&b, "+\tresolved \"https://registry.yarnpkg.com/pkg/-/pkg-1.%d.0.tgz#%s\"\n", r.IntN(20), sha())
			}
		}
		b.WriteString("\n")
	}
	return b.String()[:n]
}

var cleanDiffOnce = sync.OnceValue(func() string { return cleanDiff(10 << 20) })

func BenchmarkCleanThroughput(b *testing.B) {
	in := cleanDiffOnce()
	e, err := New(Options{Known: []string{"benchmark-" + "known-value-1", "benchmark-" + "known-value-2"}, MaxInput: len(in) + 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"detect", "redact"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var err error
				if mode == "detect" {
					_, err = e.Detect(in)
				} else {
					_, _, err = e.Redact(in)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCleanDiffHasNoFindings: the benchmark's clean text must stay clean,
// which makes it a false-positive test over a few thousand commits.
func TestCleanDiffHasNoFindings(t *testing.T) {
	in := cleanDiff(2 << 20)
	e, err := New(Options{MaxInput: len(in)})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.Detect(in)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		if i == 10 {
			t.Errorf("… %d findings in all", len(fs))
			break
		}
		t.Errorf("finding %s at %d: %q", f.Rule, f.Start, in[max(0, f.Start-40):f.End])
	}
}
