package egress

import (
	"net/netip"
	"testing"
)

// TestInward: every address a public service cannot be at is named, an
// IPv4 address inside a translator's or tunnel's IPv6 form is judged as
// itself, and public addresses — including ones beside the special blocks —
// pass.
func TestInward(t *testing.T) {
	cases := []struct{ addr, want string }{
		{"127.0.0.2", "loopback"},
		{"::1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"10.1.2.3", "private"},
		{"172.31.255.255", "private"},
		{"192.168.0.1", "private"},
		{"100.64.0.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"239.1.2.3", "multicast"},
		{"ff05::1", "multicast"},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"64:ff9b::a00:1", "private"},
		{"2002:a00:1::1", "private"},
		{"2002:7f00:1::1", "loopback"},
		{"::a00:1", "private"},          // IPv4-compatible 10.0.0.1
		{"::7f00:1", "loopback"},        // IPv4-compatible 127.0.0.1
		{"::c612:1", "special-purpose"}, // IPv4-compatible 198.18.0.1
		{"64:ff9b:1:2::3", "NAT64 local-use"},
		{"0.1.2.3", "special-purpose"},
		{"192.0.0.8", "special-purpose"},
		{"192.0.2.10", "special-purpose"},
		{"192.88.99.1", "special-purpose"},
		{"198.18.0.1", "special-purpose"},
		{"198.19.255.254", "special-purpose"},
		{"198.51.100.7", "special-purpose"},
		{"203.0.113.9", "special-purpose"},
		{"240.0.0.1", "special-purpose"},
		{"255.255.255.255", "special-purpose"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "special-purpose"}, // Teredo
		{"2001:2::1", "special-purpose"},
		{"2001:db8::1", "special-purpose"},
		{"3fff::1", "special-purpose"},
		{"100::1", "special-purpose"},
		{"5f00::1", "special-purpose"},
		{"fec0::1", "special-purpose"},
		// Public, and so nothing to say.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"9.9.9.9", ""},
		{"198.20.0.1", ""},
		{"192.0.3.1", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2001:4860:4860::8888", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:80b::200e", ""},
	}
	for _, tc := range cases {
		if got := inward(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("inward(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
