package x11

import (
	"bytes"
	"errors"
	"net"
	"reflect"
	"testing"
)

func TestParseDisplay(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Display
		err  bool
	}{
		{in: ":0", want: Display{Number: 0}},
		{in: ":12.1", want: Display{Number: 12, Screen: 1}},
		{in: "unix:3", want: Display{Host: "unix", Number: 3}},
		{in: "localhost:10.0", want: Display{Host: "localhost", Number: 10}},
		{in: "[::1]:5", want: Display{Host: "::1", Number: 5}},
		{in: "ws7.example.org:2", want: Display{Host: "ws7.example.org", Number: 2}},
		{in: "", err: true},
		{in: "host", err: true},
		{in: ":", err: true},
		{in: ":x", err: true},
		{in: ":-1", err: true},
		{in: ":01", err: true},
		{in: ":1.", err: true},
		{in: ":99999", err: true},
	} {
		got, err := ParseDisplay(tt.in)
		if (err != nil) != tt.err || err == nil && got != tt.want {
			t.Errorf("ParseDisplay(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
	if d := (Display{Host: "::1", Number: 5}); d.String() != "[::1]:5.0" {
		t.Errorf("String() = %q", d.String())
	}
}

func authFile(t *testing.T, entries ...AuthEntry) []byte {
	t.Helper()
	var b []byte
	for _, e := range entries {
		var err error
		if b, err = AppendAuthority(b, e); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// An Xauthority file round-trips; the cookie found is the entry of the
// display's host and number, a wild one last; a cut file is refused.
func TestAuthority(t *testing.T) {
	local := AuthEntry{Family: FamilyLocal, Address: []byte("ws7"), Number: "0", Name: CookieName, Data: []byte("local-cookie-016")}
	other := AuthEntry{Family: FamilyLocal, Address: []byte("ws7"), Number: "1", Name: CookieName, Data: []byte("other-display-16")}
	inet := AuthEntry{Family: FamilyInternet, Address: []byte{192, 0, 2, 7}, Number: "0", Name: CookieName, Data: []byte("inet-cookie-0016")}
	wild := AuthEntry{Family: FamilyWild, Address: []byte{}, Number: "", Name: CookieName, Data: []byte("wild-cookie-0016")}
	b := authFile(t, other, inet, local, wild)
	entries, err := ParseAuthority(b)
	if err != nil || !reflect.DeepEqual(entries, []AuthEntry{other, inet, local, wild}) {
		t.Fatalf("ParseAuthority = %+v, %v", entries, err)
	}
	for _, tt := range []struct {
		name    string
		entries []AuthEntry
		d       Display
		ips     []net.IP
		want    string
	}{
		{"local display", entries, Display{Number: 0}, nil, "local-cookie-016"},
		{"another number", entries, Display{Number: 1}, nil, "other-display-16"},
		{"by address", entries, Display{Host: "ws7.example.org", Number: 0}, []net.IP{{192, 0, 2, 7}}, "inet-cookie-0016"},
		{"loopback is this host", entries, Display{Host: "localhost", Number: 0}, []net.IP{net.IPv4(127, 0, 0, 1)}, "local-cookie-016"},
		{"nothing else: wild", entries, Display{Number: 9}, nil, "wild-cookie-0016"},
		{"none", []AuthEntry{other}, Display{Number: 9}, nil, ""},
	} {
		_, data, ok := FindCookie(tt.entries, tt.d, "ws7", tt.ips)
		if string(data) != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: cookie %q (%v), want %q", tt.name, data, ok, tt.want)
		}
	}
	last := len(authFile(t, wild))
	for cut := 1; cut < last; cut++ {
		if _, err := ParseAuthority(b[:len(b)-cut]); !errors.Is(err, ErrMalformedAuth) {
			t.Errorf("file cut by %d bytes: %v, want ErrMalformedAuth", cut, err)
		}
	}
	got := LocalEntries("node1", 12, []byte("0123456789abcdef"))
	if len(got) != 3 || got[2].Family != FamilyInternet6 || got[0].Family != FamilyLocal || string(got[0].Address) != "node1" || got[0].Number != "12" ||
		got[1].Family != FamilyInternet || !bytes.Equal(got[1].Address, []byte{127, 0, 0, 1}) {
		t.Errorf("LocalEntries = %+v", got)
	}
}

// A setup request in either byte order parses, including its padded
// credentials; shorter bytes say ErrShort; nonsense is refused.
func TestSetup(t *testing.T) {
	for _, order := range []byte{'B', 'l'} {
		s := Setup{ByteOrder: order, Major: 11, AuthName: CookieName, AuthData: []byte("0123456789abcdef")}
		b, err := AppendSetup(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(b)%4 != 0 || len(b) != 12+20+16 {
			t.Errorf("%c: %d bytes", order, len(b))
		}
		got, n, err := ParseSetup(append(b, 1, 2, 3))
		if err != nil || n != len(b) || !reflect.DeepEqual(got, s) {
			t.Errorf("%c: ParseSetup = %+v, %d, %v", order, got, n, err)
		}
		for i := range b {
			if _, _, err := ParseSetup(b[:i]); !errors.Is(err, ErrShort) {
				t.Errorf("%c: %d of %d bytes: %v, want ErrShort", order, i, len(b), err)
			}
		}
	}
	empty, _ := AppendSetup(nil, Setup{ByteOrder: 'l', Major: 11})
	if s, n, err := ParseSetup(empty); err != nil || n != 12 || s.AuthName != "" || len(s.AuthData) != 0 {
		t.Errorf("no credentials: %+v, %d, %v", s, n, err)
	}
	for _, bad := range [][]byte{
		{'x', 0, 0, 11},
		{'l', 0, 11, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0},
	} {
		if _, _, err := ParseSetup(bad); !errors.Is(err, ErrMalformedSetup) {
			t.Errorf("ParseSetup(% x) = %v, want ErrMalformedSetup", bad, err)
		}
	}
}

func FuzzParseDisplay(f *testing.F) {
	for _, s := range []string{":0", "unix:1.2", "[::1]:10.0", "h:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDisplay(s)
		if err != nil {
			return
		}
		again, err := ParseDisplay(d.String())
		if err != nil || again != d {
			t.Fatalf("%q parses to %+v, whose String %q parses to %+v, %v", s, d, d.String(), again, err)
		}
	})
}

func FuzzParseAuthority(f *testing.F) {
	b, _ := AppendAuthority(nil, AuthEntry{Family: FamilyLocal, Address: []byte("h"), Number: "0", Name: CookieName, Data: []byte("c")})
	f.Add(b)
	f.Add([]byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseAuthority(b)
		if err != nil {
			return
		}
		var out []byte
		for _, e := range entries {
			out, _ = AppendAuthority(out, e)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("% x parses to %+v, which writes % x", b, entries, out)
		}
		FindCookie(entries, Display{Number: 0}, "h", []net.IP{net.IPv4(127, 0, 0, 1)})
	})
}

func FuzzParseSetup(f *testing.F) {
	b, _ := AppendSetup(nil, Setup{ByteOrder: 'l', Major: 11, AuthName: CookieName, AuthData: []byte("0123456789abcdef")})
	f.Add(b)
	f.Add([]byte{'B', 0, 0, 11, 0, 0, 0, 1, 0, 0, 0, 0, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, n, err := ParseSetup(b)
		if err != nil {
			return
		}
		if n > len(b) || n > MaxSetup {
			t.Fatalf("length %d of %d bytes (max %d)", n, len(b), MaxSetup)
		}
		out, err := AppendSetup(nil, s)
		if err != nil || len(out) != n {
			t.Fatalf("%+v writes %d bytes (%v), parsed from %d", s, len(out), err, n)
		}
	})
}
