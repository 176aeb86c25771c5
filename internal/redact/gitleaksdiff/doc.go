// Package gitleaksdiff holds the differential tests and benchmarks of
// fixrail's redaction engine against gitleaks v8.30.1. It is a separate
// module so that gitleaks stays a test-only dependency, out of the main
// module and the shipped binary.
package gitleaksdiff
