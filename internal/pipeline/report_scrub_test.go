package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/redact"
)

// TestReportScrubReadsWhatIsWritten: the report is redacted through its JSON
// form. Credentials whose shape that form could break — a quoted value, whose
// quotes JSON escapes, and a URL password holding an &, which json.Marshal
// writes as \u0026 — are still removed, from every field.
func TestReportScrubReadsWhatIsWritten(t *testing.T) {
	e, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A chosen password's shape, assembled here; not a real credential.
	const quoted, url = "k9Qz2Lm7Rv#4", "k9&Qz2Lm7Rv4"
	r := &Report{
		Detail: "the suite printed postgres://app:" + url + "@db.internal:5432/app",
		Gates:  []GateResult{{Phase: "P4", Name: "suite", Verdict: "fail", Detail: `export DB_PASSWORD="` + quoted + `" && make`}},
	}
	if err := r.scrub(e); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{quoted, url, strings.ReplaceAll(url, "&", `\u0026`)} {
		if strings.Contains(string(b), v) || strings.Contains(r.Detail+r.Gates[0].Detail, v) {
			t.Errorf("the scrubbed report holds %q: %s", v, b)
		}
	}
	if !strings.Contains(r.Gates[0].Detail, "[REDACTED:credential-assignment]") || !strings.Contains(r.Detail, "[REDACTED:url-credentials]") {
		t.Errorf("markers missing: %q, %q", r.Detail, r.Gates[0].Detail)
	}
}
