package fixtype

// SAST is the sast fix type: a static-analysis result (gosec, Semgrep,
// CodeQL, ESLint, …), proved red and green by the configured scanner
// itself, run by the harness on the affected files (scannedType).
var SAST = scannedType("sast",
	"a static-analysis result: the configured scanner reports the rule at the location on the base and neither it nor anything as severe on the candidate",
	"static-analysis finding", 100, []string{"vulnerability"},
	"parameterise the query, validate or escape the input, use the safe API")
