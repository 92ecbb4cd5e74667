package x11

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Address families of Xauthority entries (X's FamilyInternet and so
// on).
const (
	FamilyInternet  uint16 = 0
	FamilyInternet6 uint16 = 6
	FamilyLocal     uint16 = 256
	FamilyWild      uint16 = 65535
)

// CookieName is the one authorization protocol forwarded.
const CookieName = "MIT-MAGIC-COOKIE-1"

// CookieLen is the length of the cookies the shepherd makes.
const CookieLen = 16

// AuthEntry is one entry of an Xauthority file: the cookie (Name, Data)
// for display Number at Address, of Family.
type AuthEntry struct {
	Family  uint16
	Address []byte
	Number  string
	Name    string
	Data    []byte
}

// maxAuthFile bounds an Xauthority file read whole.
const maxAuthFile = 1 << 20

// ErrMalformedAuth is an Xauthority file that does not parse.
var ErrMalformedAuth = errors.New("malformed Xauthority file")

// ParseAuthority reads an Xauthority file: entries of a 2-byte family
// and four 2-byte-length-prefixed fields, all big-endian.
func ParseAuthority(b []byte) ([]AuthEntry, error) {
	if len(b) > maxAuthFile {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformedAuth, len(b))
	}
	var out []AuthEntry
	for off := 0; off < len(b); {
		if len(b)-off < 2 {
			return nil, fmt.Errorf("%w: entry at byte %d cut short", ErrMalformedAuth, off)
		}
		e := AuthEntry{Family: binary.BigEndian.Uint16(b[off:])}
		off += 2
		var fields [4][]byte
		for i := range fields {
			if len(b)-off < 2 {
				return nil, fmt.Errorf("%w: entry at byte %d cut short", ErrMalformedAuth, off)
			}
			n := int(binary.BigEndian.Uint16(b[off:]))
			off += 2
			if len(b)-off < n {
				return nil, fmt.Errorf("%w: field of %d bytes at byte %d cut short", ErrMalformedAuth, n, off)
			}
			fields[i] = b[off : off+n]
			off += n
		}
		e.Address, e.Number, e.Name, e.Data = fields[0], string(fields[1]), string(fields[2]), fields[3]
		out = append(out, e)
	}
	return out, nil
}

// AppendAuthority appends e as an Xauthority file holds it.
func AppendAuthority(dst []byte, e AuthEntry) ([]byte, error) {
	dst = binary.BigEndian.AppendUint16(dst, e.Family)
	for _, f := range [][]byte{e.Address, []byte(e.Number), []byte(e.Name), e.Data} {
		if len(f) > 0xffff {
			return dst, fmt.Errorf("xauthority field of %d bytes", len(f))
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(f)))
		dst = append(dst, f...)
	}
	return dst, nil
}

// LocalEntries are the entries a job's Xauthority file holds for its
// display number n on this host, named hostname, with cookie: X clients
// look a TCP display on the loopback address up as this host's local
// display (libxcb), older ones by the address.
func LocalEntries(hostname string, n int, cookie []byte) []AuthEntry {
	num := strconv.Itoa(n)
	return []AuthEntry{
		{Family: FamilyLocal, Address: []byte(hostname), Number: num, Name: CookieName, Data: cookie},
		{Family: FamilyInternet, Address: net.IPv4(127, 0, 0, 1).To4(), Number: num, Name: CookieName, Data: cookie},
		{Family: FamilyInternet6, Address: net.IPv6loopback, Number: num, Name: CookieName, Data: cookie},
	}
}

// FindCookie is the cookie of the user's entries for display d: for a
// local display, an entry of this host (hostname) or any host; for a TCP
// one, of one of its addresses (ips), or of this host when the display
// is on the loopback address. Wild entries match last. ok is false when
// no entry matches: the display may need no cookie.
func FindCookie(entries []AuthEntry, d Display, hostname string, ips []net.IP) (name string, data []byte, ok bool) {
	num := strconv.Itoa(d.Number)
	loopback := d.Local()
	for _, ip := range ips {
		if ip.IsLoopback() {
			loopback = true
		}
	}
	var wild *AuthEntry
	for i := range entries {
		e := &entries[i]
		if e.Number != num && e.Family != FamilyWild {
			continue
		}
		switch e.Family {
		case FamilyWild:
			if wild == nil {
				wild = e
			}
			continue
		case FamilyLocal:
			if loopback && string(e.Address) == hostname {
				return e.Name, e.Data, true
			}
		case FamilyInternet, FamilyInternet6:
			for _, ip := range ips {
				if ip.Equal(net.IP(e.Address)) {
					return e.Name, e.Data, true
				}
			}
		}
	}
	if wild != nil {
		return wild.Name, wild.Data, true
	}
	return "", nil, false
}
