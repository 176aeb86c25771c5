package fixtype

// SAST is the sast fix type: a static-analysis result (gosec, Semgrep,
// CodeQL, ESLint, …), proved red and green by the configured scanner
// itself, run by the harness on the affected files (scannedType).
var SAST = scannedType("sast",
	"a static-analysis result: the configured scanner reports the rule at the location on the base and neither it nor anything as severe on the candidate",
	"static-analysis finding", 100, sastImplied,
	"parameterise the query, validate or escape the input, use the safe API")

// sastImplied are the words a static-analysis security finding says by
// being one: its class of weakness (CWE names). They are no signal for
// a finding of this type; what it touches — auth, payment, a sensitive
// path, a label — still raises its risk.
var sastImplied = []string{"security", "vulnerability", "exploit", "injection", "xss", "csrf", "ssrf"}
