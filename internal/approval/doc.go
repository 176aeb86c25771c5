// Package approval binds an owner's signature to one exact tool call:
// canonical requests, SSHSIG and ed25519 signatures, single-use nonces.
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
// signature against the Keyring, checks the expiry, spends the nonce and
// deletes the token, so an approval lets exactly one call through.
//
// # Signatures
//
// Two kinds are accepted. KindSSHSIG is OpenSSH's SSHSIG format with
// namespace "fixrail-approval" (sha512 when we sign; sha256 is accepted), the
// output of
//
//	ssh-keygen -Y sign -n fixrail-approval -f ~/.ssh/fixrail_approval FILE
//
// and it can be checked independently with `ssh-keygen -Y verify`.
// KindEd25519 is a raw ed25519 signature from a native key file (see
// GenerateKey) over "fixrail-sig-v1\x00fixrail-approval\x00" followed by the
// canonical request; the prefix gives it the domain separation SSHSIG gets
// from its namespace. Receipt-log checkpoints are signed the same two ways
// in the separate namespace "fixrail-checkpoint", so a checkpoint signature
// can never pass as an approval.
//
// # Key custody
//
// An approval is only worth something if the agent cannot make one. The
// approval key must therefore be a dedicated key that the agent's processes
// cannot use:
//
//   - not loaded in any ssh-agent whose socket (SSH_AUTH_SOCK) the agent's
//     shell inherits, since `ssh-keygen -Y sign` will happily sign through it;
//   - not stored under any path the agent may read: not in the repository,
//     not in $FIXRAIL_HOME (LoadKeyring refuses a keyring directory holding a
//     private key), ideally not in the agent user's home at all;
//   - ideally a FIDO key (ssh-keygen -t ed25519-sk), so that every approval
//     needs a touch, or at least passphrase-protected. fixrail reads neither:
//     the owner signs the pending file with ssh-keygen (see Store.SigPath),
//     and the keyring verifies sk-ssh-ed25519 signatures, user presence
//     included.
//
// Reading the approval key, signing in the fixrail-approval namespace, and
// writing the keyring or the approval store are themselves self-mod actions
// that the policy gates. The hook only ever needs the public keys.
//
// # Dependencies
//
// This package verifies with the standard library alone (SSH wire parsing
// in sshwire.go and sshpub.go, checked against golang.org/x/crypto/ssh and
// ssh-keygen by the tests), because the hook that links it starts once per
// tool call. Signing with OpenSSH key files lives in package sshkey. The
// verifier is stricter than x/crypto/ssh in three ways: SHA-1 RSA
// signatures (which OpenSSH refuses in SSHSIG too), RSA keys under 2048
// bits and certificates are refused.
//
// # Limits
//
// Canonicalisation turns numbers into strings, so an approval for
// {"n":1} also approves {"n":"1"}. Non-integer numbers are rejected, so a
// call whose input holds one cannot be approved. A keyring entry approves for
// every principal; allowed_signers principals are kept for messages only.
package approval
