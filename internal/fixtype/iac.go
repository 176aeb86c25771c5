package fixtype

// IaC is the iac fix type: an infrastructure-as-code misconfiguration
// (tfsec, Trivy config, KICS, checkov, …), proved red and green by the
// configured IaC scanner on the affected files; the build check runs
// terraform validate where terraform is installed (scannedType).
var IaC = scannedType("iac",
	"an infrastructure-as-code misconfiguration: the configured IaC scanner reports the rule on the base and not on the candidate; terraform validate where terraform is present",
	"infrastructure-as-code finding", 50, []string{"misconfiguration"},
	"set the secure value of the attribute the rule names, add the missing block")
