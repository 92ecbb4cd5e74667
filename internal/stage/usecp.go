package stage

import (
	"fmt"
	"path"
	"strings"
)

// CpRule is one $usecp line of a mom's config (OpenPBS and Torque):
//
//	$usecp host:/from/prefix /to/prefix
//
// A file named host:/from/prefix/rest (a stage-in source, a stage-out
// destination, an output or error path) is the local file
// /to/prefix/rest on that mom: the same file system mounted there, so it
// is copied (or written) directly instead of through another mom or scp.
// The host may be a name, "*.domain" (any host of the domain) or "*"
// (any host). Both prefixes are absolute; a prefix matches whole path
// elements only (/home matches /home/u, not /homework).
type CpRule struct {
	Host string
	From string
	To   string
}

// ParseCpRule reads the value of a $usecp line.
func ParseCpRule(v string) (CpRule, error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return CpRule{}, fmt.Errorf("$usecp %q: want host:/from /to", v)
	}
	host, from, ok := strings.Cut(f[0], ":")
	switch {
	case !ok || host == "" || strings.ContainsAny(host, "@/"):
		return CpRule{}, fmt.Errorf("$usecp %q: %q is not host:/path", v, f[0])
	case strings.Contains(host, "*") && host != "*" && (!strings.HasPrefix(host, "*.") || strings.Count(host, "*") != 1):
		return CpRule{}, fmt.Errorf("$usecp %q: a wildcard host is * or *.domain", v)
	case !path.IsAbs(from) || !path.IsAbs(f[1]):
		return CpRule{}, fmt.Errorf("$usecp %q: both prefixes must be absolute paths", v)
	}
	return CpRule{Host: strings.ToLower(host), From: path.Clean(from), To: path.Clean(f[1])}, nil
}

// HostMatches reports whether host is named by pattern: the same name
// (case aside), the same short name when pattern has no domain, any host
// of the domain for "*.domain", any host for "*".
func HostMatches(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	switch {
	case pattern == "*" || pattern == host:
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:])
	case !strings.Contains(pattern, "."):
		short, _, _ := strings.Cut(host, ".")
		return short == pattern
	}
	return false
}

// TranslateCp maps host:file through the first rule that names both the
// host and a prefix of file, and reports whether one did.
func TranslateCp(rules []CpRule, host, file string) (string, bool) {
	if !path.IsAbs(file) {
		return "", false
	}
	clean := path.Clean(file)
	for _, r := range rules {
		if !HostMatches(r.Host, host) {
			continue
		}
		rest, ok := strings.CutPrefix(clean, r.From)
		if !ok || rest != "" && rest[0] != '/' && r.From != "/" {
			continue
		}
		return path.Join(r.To, rest), true
	}
	return "", false
}
