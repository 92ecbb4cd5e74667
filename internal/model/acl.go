package model

import (
	"path"
	"strings"
)

// MatchesUserList matches user@host against a comma list of user@host
// patterns; a pattern without @host matches any host.
func MatchesUserList(list, user, host string) bool {
	for _, entry := range SplitList(list) {
		pu, ph, hasHost := strings.Cut(entry, "@")
		if ok, _ := path.Match(pu, user); !ok {
			continue
		}
		if !hasHost || ph == "*" {
			return true
		}
		if ok, _ := path.Match(ph, host); ok {
			return true
		}
		if ok, _ := path.Match(ph, ShortHost(host)); ok {
			return true
		}
	}
	return false
}

// ShortHost is a host name without its domain.
func ShortHost(h string) string {
	if i := strings.IndexByte(h, '.'); i > 0 {
		return h[:i]
	}
	return h
}

// MatchesHostList matches host against a comma list of host patterns
// (acl_hosts, a short name matching too).
func MatchesHostList(list, host string) bool {
	return MatchesUserList(strings.ReplaceAll(","+list, ",", ",*@"), "x", host)
}
