package receipt

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func lineCases() []Receipt {
	return []Receipt{
		{Seq: 1, Time: t0, Kind: KindDecision},
		{Seq: 42, Time: t0.Add(123456789 * time.Nanosecond), Prev: "ab12", Kind: KindDecision, ToolUseID: "toolu_1", Session: "s",
			Tool: "Bash", Rule: "push-force", Verdict: "deny", Reason: "git push --force <origin> & \"main\"\n\t\\ \x00\x1f\x7f",
			Input: json.RawMessage(" {\"command\" : \"a && b < c\",\n \"n\": [1, 2.5e3, null, true]} ")},
		{Seq: 3, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800)), Kind: KindOutcome,
			Reason: "bad utf-8 \xff\xfe, line sep \u2028 para \u2029, emoji 🙂", Outcome: json.RawMessage(`{"s":"\u2028<>&é"}`)},
		{Seq: 9, Time: t0, Kind: KindCheckpoint, Checkpoint: &Checkpoint{Head: "h", Seq: 8, Signature: []byte{0, 1, 2, 250}, Kind: "ed25519"}},
		{Seq: 10, Time: t0, Kind: KindCheckpoint, Checkpoint: &Checkpoint{}},
		{Seq: 11, Time: t0, Kind: KindDecision, Input: json.RawMessage("null"), Outcome: json.RawMessage(`"x"`)},
		{Seq: -1, Time: time.Time{}, Kind: ""},
	}
}

// TestMarshalLine: receipt lines are byte for byte what json.Marshal
// writes, errors included.
func TestMarshalLine(t *testing.T) {
	for _, r := range lineCases() {
		want, wantErr := json.Marshal(r)
		got, err := marshalLine(r)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("marshalLine(%+v)\n got %s (%v)\nwant %s (%v)", r, got, err, want, wantErr)
		}
	}
	for _, bad := range []Receipt{
		{Time: t0, Input: json.RawMessage(`{"a":`)},
		{Time: t0, Outcome: json.RawMessage(`x`)},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := marshalLine(bad); err == nil {
			t.Errorf("marshalLine(%+v): no error", bad)
		}
	}
}

// FuzzMarshalLine holds marshalLine to json.Marshal on arbitrary strings,
// raw JSON and signatures.
func FuzzMarshalLine(f *testing.F) {
	for _, r := range lineCases() {
		f.Add(r.Reason, r.Tool, string(r.Input), []byte("sig"), int64(r.Seq), r.Time.UnixNano())
	}
	f.Fuzz(func(t *testing.T, reason, tool, input string, sig []byte, seq, nanos int64) {
		r := Receipt{Seq: seq, Time: time.Unix(0, nanos).UTC(), Kind: KindDecision, Tool: tool, Reason: reason, Input: json.RawMessage(input)}
		if seq%2 == 0 {
			r.Checkpoint = &Checkpoint{Head: reason, Seq: seq, Signature: sig, Kind: tool}
		}
		want, wantErr := json.Marshal(r)
		got, err := marshalLine(r)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("marshalLine\n got %q (%v)\nwant %q (%v)", got, err, want, wantErr)
		}
	})
}
