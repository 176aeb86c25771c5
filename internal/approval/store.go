package approval

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// Errors from Store.Take besides the verification errors.
var (
	ErrNoToken  = errors.New("no approval for this call")
	ErrReplayed = errors.New("approval was already used")
	ErrMismatch = errors.New("approval is for a different call")
)

// maxStoreFile bounds a file the store reads: a request holds the tool's
// whole input, which the hook takes up to 16 MiB of.
const maxStoreFile = 32 << 20

// A Verifier checks that a token may authorise its request at now: the
// signature is by an approver's key, in the approval namespace, over exactly
// the request's canonical form, and the request has not expired. The
// keyring in package keys is one; the slim hook binary, which links no
// signature code, asks the fixrail binary. Store calls it between claiming
// a token and spending its nonce.
type Verifier interface {
	Verify(t *Token, now time.Time) error
}

// A Store keeps approval state under Dir ($FIXRAIL_HOME/approvals):
//
//	pending/<callkey>.json      the canonical request a denial printed: the exact bytes to sign
//	pending/<callkey>.json.sig  an SSHSIG over that file, where `ssh-keygen -Y sign` writes it
//	tokens/<callkey>.json       a signed token (see Token), written by `fixrail approve`
//	spent/<nonce>               one file per used nonce; its existence is the single-use record
//
// Directories are 0700 and files 0600. Writes go to a temporary file that is
// renamed into place, so a reader never sees half a file.
type Store struct {
	Dir string
}

// PendingPath is the file holding the pending request for callKey: the file
// the owner signs.
func (s *Store) PendingPath(callKey string) string {
	return filepath.Join(s.Dir, "pending", callKey+".json")
}

// SigPath is where `ssh-keygen -Y sign -n fixrail-approval -f KEY <PendingPath>`
// writes its signature. Take accepts a signature there as a token.
func (s *Store) SigPath(callKey string) string { return s.PendingPath(callKey) + ".sig" }

func (s *Store) tokenPath(callKey string) string {
	return filepath.Join(s.Dir, "tokens", callKey+".json")
}

func checkCallKey(callKey string) error {
	if !isLowerHex(callKey, 64) {
		return fmt.Errorf("%w: call key %q is not 64 lowercase hex digits", ErrMalformed, callKey)
	}
	return nil
}

// SavePending records r as the request waiting for approval of its call and
// returns the call key. The file holds exactly Canonical(r). It replaces any
// earlier pending request for the call, so a hook that denies the same call
// again should reuse an unexpired one (see Pending): a signature already made
// over the old file would not verify over a new nonce.
//
// The file is not fsync'd: a denied call waits for the disk once, for its
// receipt, not twice. A pending request needs no durability to keep the rail
// closed: one lost or torn by a crash reads as missing or malformed, so
// approve refuses it, Take denies a signature without it, and the next
// denial of the call writes a new one. Without a crash the rename still
// shows readers the whole file or none.
func (s *Store) SavePending(r *Request) (callKey string, err error) {
	if err := r.Validate(); err != nil {
		return "", fmt.Errorf("save pending: %w", err)
	}
	c, err := r.Canonical()
	if err != nil {
		return "", fmt.Errorf("save pending: %w", err)
	}
	if callKey, err = r.CallKey(); err != nil {
		return "", fmt.Errorf("save pending: %w", err)
	}
	if err := writeFileAtomic(s.PendingPath(callKey), c, false); err != nil {
		return "", fmt.Errorf("save pending: %w", err)
	}
	return callKey, nil
}

// Pending returns the pending request for callKey. A missing one is an error
// wrapping fs.ErrNotExist.
func (s *Store) Pending(callKey string) (*Request, error) {
	if err := checkCallKey(callKey); err != nil {
		return nil, err
	}
	data, err := pathguard.ReadRegular(s.PendingPath(callKey), maxStoreFile)
	if err != nil {
		return nil, fmt.Errorf("pending request: %w", err)
	}
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		if !errors.Is(err, ErrMalformed) {
			err = fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return nil, fmt.Errorf("pending request %s: %w", callKey, err)
	}
	return &r, nil
}

// A PendingCall is a request waiting for the owner's signature.
type PendingCall struct {
	CallKey string
	Request *Request
}

// PendingRequests lists the requests waiting for approval, soonest to
// expire first. Expired ones are included (the caller decides); files that
// are not pending requests are skipped, and one that cannot be read is an
// error naming it.
func (s *Store) PendingRequests() ([]PendingCall, error) {
	entries, err := os.ReadDir(filepath.Join(s.Dir, "pending"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	var out []PendingCall
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || checkCallKey(key) != nil || !e.Type().IsRegular() {
			continue
		}
		r, err := s.Pending(key)
		if err != nil {
			return nil, err
		}
		out = append(out, PendingCall{CallKey: key, Request: r})
	}
	slices.SortFunc(out, func(a, b PendingCall) int { return a.Request.Expires.Compare(b.Request.Expires) })
	return out, nil
}

// SaveToken stores t under its request's call key, replacing any earlier
// token for the same call. It does not verify t; Take does.
func (s *Store) SaveToken(t *Token) error {
	if err := t.Request.Validate(); err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	callKey, err := t.Request.CallKey()
	if err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	if err := writeFileAtomic(s.tokenPath(callKey), append(data, '\n'), true); err != nil {
		return fmt.Errorf("save token: %w", err)
	}
	return nil
}

// Take finds the approval for the call with callKey, verifies it against k at
// now, and spends its nonce. It returns the token only if the call may run.
//
// A token is taken at most once: Take first renames the token file to a
// private name, so concurrent hooks cannot both read it, and that file is
// removed whatever the outcome. An invalid, expired, mismatched or replayed
// token is therefore deleted and cannot fire again. The nonce is spent by
// creating spent/<nonce> with O_CREATE|O_EXCL, so a copy of a used token put
// back in place fails with ErrReplayed.
//
// Take looks for tokens/<callkey>.json first, then for an ssh-keygen
// signature at SigPath over the pending request. With neither it returns
// ErrNoToken.
func (s *Store) Take(callKey string, k Verifier, now time.Time) (*Token, error) {
	if err := checkCallKey(callKey); err != nil {
		return nil, err
	}
	t, claimed, err := s.claim(callKey)
	if claimed != "" {
		defer os.Remove(claimed)
	}
	if err != nil {
		return nil, err
	}
	got, err := t.Request.CallKey()
	if err != nil {
		return nil, err
	}
	if got != callKey {
		return nil, fmt.Errorf("%w: token names call %s", ErrMismatch, got)
	}
	if err := k.Verify(t, now); err != nil {
		return nil, err
	}
	if err := s.spend(&t.Request); err != nil {
		return nil, err
	}
	// The pending request is answered; a later denial of the same call mints
	// a new one.
	os.Remove(s.PendingPath(callKey))
	return t, nil
}

// Peek reports whether the call with callKey has an approval that Take would
// accept at now: a token (or ssh-keygen signature) for this call, signed by a
// key in k, unexpired, with an unspent nonce. Unlike Take it neither spends
// nor deletes anything, so asking never uses up the approval; the answer can
// change before the call is made (the hook's Take decides).
func (s *Store) Peek(callKey string, k Verifier, now time.Time) (*Token, error) {
	if err := checkCallKey(callKey); err != nil {
		return nil, err
	}
	var t *Token
	data, err := pathguard.ReadRegular(s.tokenPath(callKey), maxStoreFile)
	switch {
	case err == nil:
		t = new(Token)
		if err := json.Unmarshal(data, t); err != nil {
			return nil, fmt.Errorf("%w: token file: %w", ErrMalformed, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		sig, err := pathguard.ReadRegular(s.SigPath(callKey), maxStoreFile)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoToken
		}
		if err != nil {
			return nil, fmt.Errorf("peek approval: %w", err)
		}
		r, err := s.Pending(callKey)
		if err != nil {
			return nil, fmt.Errorf("%w: signature without its pending request: %w", ErrMalformed, err)
		}
		t = &Token{Request: *r, Signature: sig, Kind: KindSSHSIG}
	default:
		return nil, fmt.Errorf("peek approval: %w", err)
	}
	if got, err := t.Request.CallKey(); err != nil {
		return nil, err
	} else if got != callKey {
		return nil, fmt.Errorf("%w: token names call %s", ErrMismatch, got)
	}
	if err := k.Verify(t, now); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, "spent", t.Request.Nonce)); err == nil {
		return nil, fmt.Errorf("%w: nonce %s", ErrReplayed, t.Request.Nonce)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("peek approval: %w", err)
	}
	return t, nil
}

// claim moves the call's token (or ssh-keygen signature) to a private name
// and parses it. It returns the claimed path, to be removed by the caller,
// whenever a file was claimed, even if parsing failed.
func (s *Store) claim(callKey string) (*Token, string, error) {
	// Most denials have no approval waiting. Say so before drawing the
	// private name's randomness, whose first use in a process (the hook's
	// one call) costs more than the rest of the lookup. The rename below is
	// still the claim: a file that appears after this look is found by the
	// call's retry.
	if absent(s.tokenPath(callKey)) && absent(s.SigPath(callKey)) {
		return nil, "", ErrNoToken
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, "", fmt.Errorf("take approval: %w", err)
	}
	private := "." + callKey + "." + hex.EncodeToString(suffix[:]) + ".taking"

	tokenPath := s.tokenPath(callKey)
	claimed := filepath.Join(filepath.Dir(tokenPath), private)
	err := os.Rename(tokenPath, claimed)
	if err == nil {
		data, err := pathguard.ReadRegular(claimed, maxStoreFile)
		if err != nil {
			return nil, claimed, fmt.Errorf("take approval: %w", err)
		}
		var t Token
		if err := json.Unmarshal(data, &t); err != nil {
			if !errors.Is(err, ErrMalformed) {
				err = fmt.Errorf("%w: token file: %w", ErrMalformed, err)
			}
			return nil, claimed, err
		}
		return &t, claimed, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("take approval: %w", err)
	}

	sigPath := s.SigPath(callKey)
	claimed = filepath.Join(filepath.Dir(sigPath), private)
	if err := os.Rename(sigPath, claimed); errors.Is(err, fs.ErrNotExist) {
		return nil, "", ErrNoToken
	} else if err != nil {
		return nil, "", fmt.Errorf("take approval: %w", err)
	}
	sig, err := pathguard.ReadRegular(claimed, maxStoreFile)
	if err != nil {
		return nil, claimed, fmt.Errorf("take approval: %w", err)
	}
	r, err := s.Pending(callKey)
	if err != nil {
		return nil, claimed, fmt.Errorf("%w: signature without its pending request: %w", ErrMalformed, err)
	}
	return &Token{Request: *r, Signature: sig, Kind: KindSSHSIG}, claimed, nil
}

// spend records r's nonce as used, durably, or fails with ErrReplayed.
func (s *Store) spend(r *Request) error {
	dir := filepath.Join(s.Dir, "spent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spend nonce: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, r.Nonce), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: nonce %s", ErrReplayed, r.Nonce)
	}
	if err != nil {
		return fmt.Errorf("spend nonce: %w", err)
	}
	_, werr := f.WriteString(r.Expiry().Format(time.RFC3339) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr, syncDir(dir)); err != nil {
		// The nonce file exists, so the nonce counts as spent; say so
		// rather than let the call run on a record that may not survive.
		return fmt.Errorf("spend nonce: %w", err)
	}
	return nil
}

// Prune removes spent-nonce records and pending requests whose expiry is
// before cutoff, and leftover claimed files. A pruned nonce can only be
// replayed by a token that has already expired, so pass a cutoff some margin
// before now (a day, say) to allow for clock steps.
func (s *Store) Prune(cutoff time.Time) error {
	var errs []error
	spent := filepath.Join(s.Dir, "spent")
	entries, err := os.ReadDir(spent)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		p := filepath.Join(spent, e.Name())
		data, err := pathguard.ReadRegular(p, 1<<10)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		exp, err := time.Parse(time.RFC3339, strings.TrimSpace(string(data)))
		if err == nil && exp.Before(cutoff) {
			errs = append(errs, os.Remove(p))
		}
	}
	for _, sub := range []string{"pending", "tokens"} {
		dir := filepath.Join(s.Dir, sub)
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case strings.HasSuffix(e.Name(), ".taking"):
				if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
					errs = append(errs, os.Remove(p))
				}
			case sub == "pending" && strings.HasSuffix(e.Name(), ".json"):
				r, err := s.Pending(strings.TrimSuffix(e.Name(), ".json"))
				if err == nil && r.Expiry().Before(cutoff) {
					errs = append(errs, os.Remove(p))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prune approvals: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file and renames it over path,
// fsync'ing the data first when sync is set.
func writeFileAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	var serr error
	if sync {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// absent reports whether nothing, not even a dangling link, is at path.
func absent(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
