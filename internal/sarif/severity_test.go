package sarif

import "testing"

func TestSeverity(t *testing.T) {
	score := func(s string) *PropertyBag { return &PropertyBag{SecuritySeverity: s} }
	tags := func(t ...string) *PropertyBag { return &PropertyBag{Tags: t} }
	def := func(level string, p *PropertyBag) *ReportingDescriptor {
		return &ReportingDescriptor{ID: "r", DefaultConfiguration: &Configuration{Level: level}, Properties: p}
	}
	for _, tc := range []struct {
		name string
		res  Result
		rule *ReportingDescriptor
		want string
	}{
		{"score 9.5 over level note", Result{Level: "note"}, def("", score("9.5")), "critical"},
		{"score 9.0", Result{}, def("", score("9.0")), "critical"},
		{"score 7.0", Result{}, def("", score("7.0")), "high"},
		{"score 6.9", Result{}, def("", score("6.9")), "medium"},
		{"score 0.1", Result{}, def("", score("0.1")), "low"},
		{"score 0.0", Result{}, def("", score("0.0")), "note"},
		{"score with blanks", Result{}, def("", score(" 8.1 ")), "high"},
		{"score out of range: the level decides", Result{Level: "error"}, def("", score("11")), "high"},
		{"negative score: the level decides", Result{Level: "note"}, def("", score("-1")), "low"},
		{"score not a number", Result{Level: "warning"}, def("", score("x")), "medium"},
		{"the result's score before the rule's", Result{Properties: score("4.0")}, def("", score("9.8")), "medium"},
		{"score before a tag", Result{}, def("error", &PropertyBag{SecuritySeverity: "3.0", Tags: []string{"HIGH"}}), "low"},
		// gosec v2.30.0: level error for every grade, the grade a tag.
		{"gosec MEDIUM, level error", Result{Level: "error"}, def("error", tags("security", "MEDIUM")), "medium"},
		{"gosec HIGH", Result{Level: "error"}, def("error", tags("security", "HIGH")), "high"},
		{"Trivy CRITICAL", Result{Level: "error"}, def("error", tags("vulnerability", "CRITICAL")), "critical"},
		{"the result's tag before the rule's", Result{Level: "error", Properties: tags("LOW")}, def("error", tags("HIGH")), "low"},
		{"lower-case tags are words, not grades", Result{Level: "error"}, def("", tags("security", "low", "medium")), "high"},
		{"NOTE is no grade", Result{Level: "warning"}, def("", tags("NOTE")), "medium"},
		// tfsec v1.26.0 writes its LOW as level note and nothing else.
		{"level error", Result{Level: "error"}, nil, "high"},
		{"level warning", Result{Level: "warning"}, nil, "medium"},
		{"level note (tfsec's LOW)", Result{Level: "note"}, nil, "low"},
		{"level none", Result{Level: "none"}, nil, "note"},
		{"the rule's default level", Result{}, def("error", nil), "high"},
		// gitleaks v8.30.1: no level, no default, no grade.
		{"no level anywhere: SARIF's warning", Result{}, &ReportingDescriptor{ID: "gitlab-pat"}, "medium"},
		{"an unknown level is not waved through", Result{Level: "fatal"}, nil, "medium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Severity(&tc.res, tc.rule); got != tc.want {
				t.Errorf("Severity = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRank(t *testing.T) {
	for i, s := range Severities {
		if Rank(s) != i {
			t.Errorf("Rank(%q) = %d, want %d", s, Rank(s), i)
		}
	}
	if Rank("bogus") != Rank("high") || Rank("") != Rank("high") {
		t.Errorf("an ungraded severity ranks %d, want high's %d", Rank("bogus"), Rank("high"))
	}
	if !(Rank("critical") > Rank("high") && Rank("high") > Rank("medium") && Rank("medium") > Rank("low") && Rank("low") > Rank("note")) {
		t.Error("severities out of order")
	}
}
