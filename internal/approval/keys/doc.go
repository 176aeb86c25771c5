// Package keys holds the approvers' keys: the Keyring that verifies an
// approval's (or a checkpoint's, or an attestation's) signature, and the
// native Key that makes one. Package approval's Store verifies tokens
// through it; fixrail-hook, the slim hook binary, does not link it and asks
// the fixrail binary instead (`fixrail hook verify-approval`), because the
// ed25519, ECDSA and RSA code's initialisation costs every tool call, and
// few calls carry an approval.
//
// # Signatures
//
// Two kinds are accepted. approval.KindSSHSIG is OpenSSH's SSHSIG format with
// namespace "fixrail-approval" (sha512 when we sign; sha256 is accepted), the
// output of
//
//	ssh-keygen -Y sign -n fixrail-approval -f ~/.ssh/fixrail_approval FILE
//
// and it can be checked independently with `ssh-keygen -Y verify`.
// approval.KindEd25519 is a raw ed25519 signature from a native key file (see
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
//     the owner signs the pending file with ssh-keygen (see approval.Store.SigPath),
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
// ssh-keygen by the tests), because the processes that link it (fixrail
// hook, fixrail mcp, verify-approval) start once per call. Signing with OpenSSH key files lives in package sshkey. The
// verifier is stricter than x/crypto/ssh in three ways: SHA-1 RSA
// signatures (which OpenSSH refuses in SSHSIG too), RSA keys under 2048
// bits and certificates are refused.
package keys
