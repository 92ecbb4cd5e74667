// Package webtoken keeps the per-user tokens of pbs_server's web page and
// JSON API (internal/web) in PBS_HOME/server_priv/web_tokens: root issues
// them with pbs_webtoken, the server reads the file when it changes.
//
// The file holds one token per line, "user<TAB>sha256-hex<TAB>created",
// the created time in Unix seconds; blank lines and lines starting with #
// are skipped. Only the SHA-256 of each token is stored: a copy of the
// file does not let anyone in. Tokens are 32 random bytes, written
// "pbsw_" and base64url, so a token pasted into the wrong place is
// recognisable. A user may hold several tokens; revoking a user removes
// every line of theirs.
//
// The file must belong to the user the server runs as and be readable by
// no one else (mode 0600): Check says why a file is refused.
package webtoken

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Prefix starts every token.
const Prefix = "pbsw_"

// MaxFile bounds the file read: a few thousand users' tokens fit.
const MaxFile = 4 << 20

// Entry is one issued token, as stored.
type Entry struct {
	User    string
	Hash    [sha256.Size]byte
	Created int64
}

// New makes a token: Prefix and 32 random bytes in base64url.
func New() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("web token: %w", err)
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Hash is what the file stores of token.
func Hash(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// ValidUser reports whether name can be a token's user: a Unix user
// name's characters (letters, digits, '.', '_', '-', and '$' last), at
// most 64 bytes, not starting with '-'.
func ValidUser(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		case c == '$' && i == len(name)-1:
		default:
			return false
		}
	}
	return true
}

// Parse reads a tokens file; name is used in messages, which give the
// line of the first problem.
func Parse(r io.Reader, name string) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), 4096)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want user<TAB>sha256<TAB>created", name, line)
		}
		e := Entry{User: f[0]}
		if !ValidUser(e.User) {
			return nil, fmt.Errorf("%s:%d: %q is not a user name", name, line, e.User)
		}
		h, err := hex.DecodeString(f[1])
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%s:%d: the hash is not 64 hex digits", name, line)
		}
		copy(e.Hash[:], h)
		if e.Created, err = strconv.ParseInt(f[2], 10, 64); err != nil || e.Created < 0 {
			return nil, fmt.Errorf("%s:%d: created %q is not a Unix time", name, line, f[2])
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return out, nil
}

// Format writes entries as Parse reads them, with a heading comment.
func Format(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("# pbs_server web tokens (pbs_webtoken): user, sha256 of the token, created\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\t%d\n", e.User, hex.EncodeToString(e.Hash[:]), e.Created)
	}
	return b.Bytes()
}

// Lookup is the user of token among entries, comparing every hash in
// constant time.
func Lookup(entries []Entry, token string) (string, bool) {
	h := Hash(token)
	user, found := "", false
	for _, e := range entries {
		if subtle.ConstantTimeCompare(e.Hash[:], h[:]) == 1 && !found {
			user, found = e.User, true
		}
	}
	return user, found
}

// Check says why the file of info may not be trusted: it must be a
// regular file owned by uid and neither readable nor writable by group
// or others.
func Check(path string, info fs.FileInfo, uid int) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s: mode %04o lets others read or change it (want 0600)", path, perm)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return fmt.Errorf("%s: owned by uid %d, not %d", path, st.Uid, uid)
	}
	return nil
}

// Load reads and checks the file at path: no file is no tokens.
func Load(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("web tokens: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("web tokens: %w", err)
	}
	if err := Check(path, info, os.Geteuid()); err != nil {
		return nil, err
	}
	if info.Size() > MaxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFile)
	}
	return Parse(io.LimitReader(f, MaxFile), path)
}
