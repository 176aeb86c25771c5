// Package verdict owns the words a run and its checks end in: the four
// terminal states, every reason code a terminal carries, and the verdicts a
// check records. It is a leaf, so the pipeline, the gates, the fix types and
// the leaf packages that decide a reason (ledger, risk) all name the same
// constants, and the README's table is checked against this one list.
package verdict

// Terminal is one of the four honest end states of a run. There is no fifth.
type Terminal string

// The four terminal states.
const (
	DraftPR  Terminal = "DRAFT-PR"
	Escalate Terminal = "ESCALATE"
	NotRepro Terminal = "NOT-REPRO"
	Halt     Terminal = "HALT"
)

// Terminals lists the four states, mildest first.
var Terminals = []Terminal{DraftPR, NotRepro, Halt, Escalate}

// Severity orders terminals for a batch: the most severe run decides the
// batch's exit code, so a wrapper cannot read a broken run as green.
func (t Terminal) Severity() int {
	switch t {
	case DraftPR:
		return 0
	case NotRepro:
		return 1
	case Halt:
		return 2
	case Escalate:
		return 3
	}
	return 4
}

// Check verdicts, as the run report and the event log record them.
const (
	Pass        = "pass"
	Fail        = "fail"
	Error       = "error"       // the check could not decide; the run fails closed
	Unconfirmed = "unconfirmed" // passed without proof: the PR is labelled needs-review
)

// Reason codes. Each terminal outcome carries exactly one; the runner's
// failure kinds (runner.Kind) are reason codes too and live with the runner.
const (
	ReasonFixed            = "fixed"
	ReasonInFlight         = "in-flight"
	ReasonWallClock        = "wall-clock"
	ReasonInterrupted      = "interrupted"
	ReasonInternal         = "internal-error"
	ReasonDeclined         = "declined"
	ReasonNoPlan           = "no-plan"
	ReasonUnsafePath       = "unsafe-path"
	ReasonWriteBeforeRepro = "write-before-repro"
	ReasonGreenOnBase      = "green-on-base"
	ReasonSymptomMismatch  = "symptom-mismatch"
	ReasonBadTestPath      = "bad-test-path"
	ReasonSensitivePath    = "sensitive-path"
	ReasonBadResult        = "bad-result"
	ReasonGateError        = "gate-error"
	ReasonCheckError       = "check-error"
	ReasonForgeError       = "forge-error"
	ReasonConfigDrift      = "config-drift"
	ReasonNoSandbox        = "no-sandbox"
	ReasonPoisoned         = "poisoned-clone"
	ReasonUndeclared       = "undeclared-changes"
	ReasonLeak             = "leak"
	ReasonBudgetExhausted  = "budget-exhausted"
	ReasonBudgetUnreadable = "budget-unreadable"
	ReasonHighRisk         = "high-risk"
	ReasonEmptyDiff        = "empty-diff"
	ReasonDiffOutsidePlan  = "diff-outside-plan"
	ReasonDiffBudget       = "diff-budget"
	ReasonTestModified     = "test-modified"
	ReasonOracleStillRed   = "oracle-still-red"
	ReasonSuiteRed         = "suite-red"
	ReasonLLMFail          = "llm-fail"
	// The commit message the harness would write holds a closing keyword
	// and a reference ("fixes #7") from a value the repository, a scanner
	// or the agent chose (a path, a rule id): merged, the commit would
	// close an issue or pull request the finding is not about.
	ReasonClosesAnIssue = "closes-an-issue"
	// The added-packages gate's: a package version a fix adds to a
	// manifest or lockfile is named by an advisory (malware included), or
	// could not be checked (no advisory data, a declaration that names no
	// registry version, a dependency file fixrail does not read).
	ReasonAddedAdvisory  = "added-package-advisory"
	ReasonAddedUnchecked = "added-package-unchecked"
	// The evidence (a reproducing test, its fixtures) changes or deletes a
	// line the base already has, or changes a tracked file at all as a
	// fixture: a reproducing test never replaces a test someone else wrote.
	ReasonEvidenceChangesTracked = "evidence-changes-tracked"
	// The suite passed on the base plus the fix alone and fails with the
	// evidence added: the evidence changed what the suite says.
	ReasonEvidenceBreaksSuite = "evidence-breaks-suite"
	// The investigation's own answer that there is nothing to fix (a
	// PLAN.json conclusion, with its reason for a human): the reported
	// behaviour is as designed, or it could not be reproduced.
	ReasonWorksAsDesigned = "works-as-designed"
	ReasonCannotReproduce = "cannot-reproduce"
	// The cve fix type's: the alert's package is declared in no manifest
	// of the repository (never an edit of something nobody asked for), and
	// every published version is affected.
	ReasonNotInManifest = "package-not-in-manifest"
	ReasonNoSafeVersion = "no-safe-version"
	// The cve type's built-in bump was made but its lockfile regeneration
	// (go mod tidy, npm install --package-lock-only, offline) failed: most
	// often the cache lacks the target, which the operator fills.
	ReasonLockfileRegen = "lockfile-regen-failed"
	// The lockfile-sources gate's: an npm lockfile or a uv.lock the fix
	// changes names a URL to fetch a package from that it did not hold
	// before and that comes from no registry or index the operator named
	// (through extra_env; else the public one), whoever wrote it: the
	// harness's regeneration, the agent's, the agent's hand.
	ReasonLockfileSource = "lockfile-source"
	// The cve type had no advisory data (offline with nothing cached, or
	// a service unreachable): no version can be decided or judged, so no
	// run (HALT), as resolve-version exits 1.
	ReasonNoAdvisoryData = "no-advisory-data"
	// The cve type found a declaration of the package that decides the
	// build's version and that the fix cannot move (a Go replace directive,
	// an include fixrail cannot read, a declaration the bumper does not
	// edit beside others it does): a bump would not change what the build
	// uses, so a human decides.
	ReasonUnbumpable = "unbumpable-declaration"
	// The scanned and secret fix types': the finding names no file, rule
	// or value the harness can check at a location of the base (NOT-REPRO);
	// the fix brings a new scanner result as severe as the finding, or
	// adds a marker that makes a scanner ignore one; the language build
	// check of a changed file fails (each ESCALATE).
	ReasonNoLocation        = "no-location"
	ReasonNewScannerResult  = "new-scanner-result"
	ReasonScannerSuppressed = "scanner-suppressed"
	ReasonBuildCheck        = "build-check-failed"
	// The forge's.
	ReasonForgeRateLimited   = "forge-rate-limited"
	ReasonForgeUnavailable   = "forge-unavailable"
	ReasonDraftUnsupported   = "draft-unsupported"
	ReasonNoBranchProtection = "no-branch-protection"
	ReasonActionsCannotOpen  = "actions-cannot-open-prs"
	// P1's access check: the token cannot push, open a PR or comment
	// (the detail names the permission). A HALT before any agent runs.
	ReasonTokenLacksPermission = "token-lacks-permission"
	// S7: an open fixrail PR whose checks are red or pending.
	ReasonInFlightBroken = "in-flight-broken"
	// An escalation is already open on the finding's issue: a no-op.
	ReasonEscalationOpen = "escalation-open"
	// The draft PR's checks came back red; the PR stays open.
	ReasonCIFailed = "ci-failed"
	// The watched checks (recheck.checks) still reported findings on the
	// draft's head after recheck.max_retries follow-up fixes, and
	// recheck.on_failure is escalate; the PR stays open.
	ReasonRecheckFailed = "recheck-failed"
	// A dry run (run --dry-run) stopped where it was asked to: after the
	// plan was reproduced and Stage A passed, before any fix was asked
	// for. The detail says what the run would have fixed.
	ReasonDryRun = "dry-run"
	// The agent asked fixrail's egress proxy for a host:port runner.egress
	// does not list (or a listed name that resolved inwards): an attempt
	// to send something out, ESCALATE.
	ReasonEgressRefused = "egress-refused"
	// The agent's requests reached the run's egress byte or connection
	// cap: a bound, HALT.
	ReasonEgressCap = "egress-cap"
)
