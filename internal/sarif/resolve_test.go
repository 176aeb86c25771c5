package sarif

import "testing"

func ip(i int) *int { return &i }

func TestRule(t *testing.T) {
	run := &Run{Tool: Tool{
		Driver:     Driver{Name: "d", Rules: []ReportingDescriptor{{ID: "a"}, {ID: "b"}}},
		Extensions: []Driver{{Name: "pack", Rules: []ReportingDescriptor{{ID: "x/y"}}}},
	}}
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"by id", Result{RuleID: "b"}, "b"},
		{"by index", Result{RuleIndex: ip(1)}, "b"},
		{"index disagrees with id: the id wins", Result{RuleID: "a", RuleIndex: ip(1)}, "a"},
		{"index out of range", Result{RuleID: "b", RuleIndex: ip(9)}, "b"},
		{"in an extension by index", Result{RuleID: "x/y", Rule: &RuleReference{Index: ip(0), ToolComponent: &ToolComponentReference{Index: ip(0)}}}, "x/y"},
		{"in an extension by name", Result{Rule: &RuleReference{ID: "x/y", ToolComponent: &ToolComponentReference{Name: "pack"}}}, "x/y"},
		{"an extension that is not there", Result{RuleID: "x/y", Rule: &RuleReference{ToolComponent: &ToolComponentReference{Index: ip(3)}}}, ""},
		{"an unknown rule", Result{RuleID: "zzz"}, ""},
		{"a hierarchical id is whole", Result{RuleID: "x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if r := run.Rule(&tc.res); r != nil {
				got = r.ID
			}
			if got != tc.want {
				t.Errorf("rule %q, want %q", got, tc.want)
			}
		})
	}
	if id := run.RuleID(&Result{RuleIndex: ip(0)}); id != "a" {
		t.Errorf("RuleID by index = %q", id)
	}
}

func TestLevelActionable(t *testing.T) {
	rule := &ReportingDescriptor{DefaultConfiguration: &Configuration{Level: "error"}}
	if l := Level(&Result{}, rule); l != "error" {
		t.Errorf("default level %q", l)
	}
	if l := Level(&Result{}, nil); l != LevelWarning {
		t.Errorf("schema default %q", l)
	}
	for _, tc := range []struct {
		res  Result
		want bool
	}{
		{Result{}, true},
		{Result{Kind: "pass"}, false},
		{Result{Kind: "notApplicable"}, false},
		{Result{Kind: "review"}, true},
		{Result{Suppressions: []Suppression{{Kind: "inSource"}}}, false},
		{Result{Suppressions: []Suppression{{Kind: "external", Status: "underReview"}}}, true},
		{Result{Suppressions: []Suppression{{Kind: "external", Status: "rejected"}}}, true},
		{Result{BaselineState: "absent"}, false},
		{Result{BaselineState: "new"}, true},
	} {
		if got := Actionable(&tc.res); got != tc.want {
			t.Errorf("Actionable(%+v) = %v", tc.res, got)
		}
	}
}

func TestResolveURI(t *testing.T) {
	run := &Run{
		OriginalURIBaseIDs: map[string]ArtifactLocation{
			"SRC":   {URI: "src/", URIBaseID: "ROOT"},
			"ROOT":  {URI: "app"},
			"LOOP":  {URI: "a/", URIBaseID: "LOOP"},
			"ABS":   {URI: "file:///work/repo/"},
			"EMPTY": {},
		},
		Artifacts: []Artifact{{Location: &ArtifactLocation{URI: "b.go"}}},
	}
	for _, tc := range []struct {
		al      ArtifactLocation
		want    string
		abs, ok bool
	}{
		{ArtifactLocation{URI: "a.go"}, "a.go", false, true},
		{ArtifactLocation{URI: "a%20b.go"}, "a b.go", false, true},
		{ArtifactLocation{URI: "a.go", URIBaseID: "%SRCROOT%"}, "a.go", false, true},
		{ArtifactLocation{URI: "a.go", URIBaseID: "SRC"}, "app/src/a.go", false, true},
		{ArtifactLocation{URI: "a.go", URIBaseID: "EMPTY"}, "a.go", false, true},
		{ArtifactLocation{URI: "a.go", URIBaseID: "ABS"}, "/work/repo/a.go", true, true},
		{ArtifactLocation{URI: "file:///etc/passwd"}, "/etc/passwd", true, true},
		{ArtifactLocation{URI: "file://evil.example/x"}, "", false, false},
		{ArtifactLocation{URI: "https://example.com/a.go"}, "", false, false},
		{ArtifactLocation{URI: "a.go", URIBaseID: "LOOP"}, "", false, false},
	} {
		got, abs, ok := run.ResolveURI(&tc.al)
		if got != tc.want || abs != tc.abs || ok != tc.ok {
			t.Errorf("ResolveURI(%+v) = %q %v %v; want %q %v %v", tc.al, got, abs, ok, tc.want, tc.abs, tc.ok)
		}
	}
	res := &Result{Locations: []Location{{PhysicalLocation: &PhysicalLocation{ArtifactLocation: &ArtifactLocation{Index: ip(0)}, Region: &Region{StartLine: 3}}}}}
	al, reg := run.PrimaryLocation(res)
	if al == nil || al.URI != "b.go" || reg.StartLine != 3 {
		t.Errorf("PrimaryLocation by artifact index = %+v %+v", al, reg)
	}
	if al, _ := run.PrimaryLocation(&Result{Locations: []Location{{LogicalLocations: []LogicalLocation{{Name: "pkg"}}}}}); al != nil {
		t.Errorf("a logical location is a file: %+v", al)
	}
}
