package keys

import (
	"encoding/binary"
	"errors"
	"math/big"
)

// The SSH wire encoding (RFC 4251 §5) of the few types SSHSIG and public
// keys use. The hook verifies approvals in its own process on every gated
// call, and golang.org/x/crypto/ssh, which signs, also sets up a whole SSH
// transport at init; this package verifies with the standard library's
// primitives and parses the wire format here, strictly, so that the hook
// does not link it. Tests check both against x/crypto/ssh and ssh-keygen.

var errShortWire = errors.New("truncated SSH wire data")

// wireReader reads SSH wire values from a byte slice. The first error
// sticks: later reads return zero values, and err reports it.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *wireReader) uint32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.fail(errShortWire)
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *wireReader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail(errShortWire)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// bytes reads a string (uint32 length, then that many bytes). The result
// aliases the input.
func (r *wireReader) bytes() []byte {
	n := r.uint32()
	if r.err != nil || uint64(n) > uint64(len(r.b)) {
		r.fail(errShortWire)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *wireReader) string() string { return string(r.bytes()) }

// mpint reads a non-negative multiple-precision integer in its minimal
// form: no superfluous leading zero byte, no sign bit set.
func (r *wireReader) mpint() *big.Int {
	b := r.bytes()
	if r.err != nil {
		return nil
	}
	switch {
	case len(b) > 0 && b[0]&0x80 != 0:
		r.fail(errors.New("negative mpint"))
		return nil
	case len(b) > 1 && b[0] == 0 && b[1]&0x80 == 0:
		r.fail(errors.New("mpint with a superfluous leading zero"))
		return nil
	}
	return new(big.Int).SetBytes(b)
}

// end fails unless every byte was read: trailing data is never ignored.
func (r *wireReader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail(errors.New("trailing bytes in SSH wire data"))
	}
	return r.err
}

// appendWireString appends s as an SSH string.
func appendWireString(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
