// Package approval binds an owner's signature to one exact tool call:
// canonical requests, tokens, the store of pending requests and single-use
// nonces. The signatures themselves — making them, and the keyring that
// verifies them — are package keys', which this package does not import:
// the slim hook links this package on every tool call, and the signature
// code only in the process that checks one (see Verifier).
//
// # The flow
//
// When a gate-mode rule matches, the hook denies the call and records a
// Request: tool, canonicalised input, cwd, rule, an expiry and a 128-bit
// nonce. Store.SavePending writes its canonical form (RFC 8785 JSON, numbers
// as strings; see Canonicalize) to pending/<callkey>.json, and the denial
// prints that text and the command that signs it. The call key is a hash of
// tool, input, cwd and rule only, so when the agent retries the identical
// call the hook computes the same key and Store.Take finds the owner's
// signature: a token file written by `fixrail approve`, or the .sig file
// `ssh-keygen -Y sign` writes next to the pending request. Take verifies the
// signature with a Verifier (the keyring of package keys), checks the expiry, spends the nonce and
// deletes the token, so an approval lets exactly one call through.
//
// # Limits
//
// Canonicalisation turns numbers into strings, so an approval for
// {"n":1} also approves {"n":"1"}. Non-integer numbers are rejected, so a
// call whose input holds one cannot be approved. A keyring entry approves for
// every principal; allowed_signers principals are kept for messages only.
package approval
