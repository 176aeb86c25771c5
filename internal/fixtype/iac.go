package fixtype

// IaC is the iac fix type: an infrastructure-as-code misconfiguration
// (tfsec, Trivy config, KICS, checkov, …), proved red and green by the
// configured IaC scanner on the affected files; the build check runs
// terraform validate where terraform is installed (scannedType).
var IaC = scannedType("iac",
	"an infrastructure-as-code misconfiguration: the configured IaC scanner reports the rule on the base and not on the candidate; terraform validate where terraform is present",
	"infrastructure-as-code finding", 50, iacImplied,
	"set the secure value of the attribute the rule names, add the missing block")

// iacImplied are the words an IaC scanner's finding says by definition:
// every one is a security misconfiguration, and AWS names a firewall a
// "security group" (tfsec's own title for a group open to the world is
// "An ingress security group rule allows traffic from /0."), so scoring
// "security" escalated every such finding. What it touches — encryption,
// auth, payment — still routes.
var iacImplied = []string{"misconfiguration", "security"}
