package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/fixrail/fixrail/internal/events"
)

// TestHeartbeatSetting: FIXRAIL_HEARTBEAT is a duration of at least a
// second, 0 for none, unset for the default; anything else is a usage
// error, never a silent default.
func TestHeartbeatSetting(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  time.Duration
		usage bool
	}{
		{set: false, want: events.DefaultHeartbeat},
		{value: "", set: true, want: events.DefaultHeartbeat},
		{value: "1s", set: true, want: time.Second},
		{value: "2m30s", set: true, want: 150 * time.Second},
		{value: "0", set: true, want: 0},
		{value: "0s", set: true, want: 0},
		{value: "999ms", set: true, usage: true},
		{value: "-5s", set: true, usage: true},
		{value: "30", set: true, usage: true},
		{value: "soon", set: true, usage: true},
	} {
		got, err := heartbeat(func(k string) (string, bool) {
			if k != "FIXRAIL_HEARTBEAT" {
				t.Fatalf("looked up %s", k)
			}
			return tc.value, tc.set
		})
		var ue *usageError
		switch {
		case tc.usage && !errors.As(err, &ue):
			t.Errorf("%q: got %v, %v; want a usage error", tc.value, got, err)
		case !tc.usage && (err != nil || got != tc.want):
			t.Errorf("%q: got %v, %v; want %v", tc.value, got, err, tc.want)
		}
	}
}
