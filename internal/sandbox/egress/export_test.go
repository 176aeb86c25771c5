package egress

import "time"

// SetTunnelOpenTimeout shortens the wait for a tunnel's first bytes; the
// returned func restores it.
func SetTunnelOpenTimeout(d time.Duration) func() {
	old := tunnelOpenTimeout
	tunnelOpenTimeout = d
	return func() { tunnelOpenTimeout = old }
}
