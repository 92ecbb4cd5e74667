package hostaddr

import (
	"net/netip"
	"testing"
)

func TestLocal(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("2001:db8::5")}
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"::ffff:127.0.0.2", true},
		{"10.1.2.3", true},
		{"::ffff:10.1.2.3", true},
		{"2001:db8::5", true},
		{"10.1.2.4", false},
		{"2001:db8::6", false},
		{"192.0.2.7", false},
		{"0.0.0.0", false},
	} {
		if got := Local(netip.MustParseAddr(tt.addr), own); got != tt.want {
			t.Errorf("Local(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if Local(netip.Addr{}, own) {
		t.Error("the zero Addr is local")
	}
}

// The interfaces are read once per TTL, not once per question; loopback
// needs no read at all.
func TestCache(t *testing.T) {
	reads := 0
	c := Cache{ReadAddrs: func() ([]netip.Addr, error) {
		reads++
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	}}
	if !c.Local(netip.MustParseAddr("127.0.0.9")) || reads != 0 {
		t.Fatalf("loopback: reads %d", reads)
	}
	for i := 0; i < 3; i++ {
		if !c.Local(netip.MustParseAddr("10.1.2.3")) || c.Local(netip.MustParseAddr("10.1.2.4")) {
			t.Fatal("own addresses misjudged")
		}
	}
	if reads != 1 {
		t.Fatalf("%d reads within the TTL", reads)
	}
}

// This host has at least its loopback address.
func TestRead(t *testing.T) {
	addrs, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if a.IsLoopback() {
			return
		}
	}
	t.Fatalf("no loopback among %v", addrs)
}
