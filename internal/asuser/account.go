// Package asuser acts as a job's owner: it resolves the owner's account
// on this host (Lookup) and runs file operations with the owner's
// file-system identity (Run, Open), so that pbs_mom and a job's shepherd,
// running as root, never touch a user's files with their own rights.
// Both use it: the mom to check a job's owner and to serve staging
// copies, the shepherd to run the job, open its output files and copy
// its staged files.
package asuser

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// Account is a job owner as the execution host knows them.
type Account struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32
	Home   string
	Shell  string
}

// Lookup resolves user (and group, when the job names one the user
// belongs to) through the system's user database.
func Lookup(name, group string) (*Account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q", name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q", name, u.Gid)
	}
	a := &Account{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir, Shell: loginShell(name)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if n, err := strconv.ParseUint(id, 10, 32); err == nil {
				a.Groups = append(a.Groups, uint32(n))
			}
		}
	}
	if group != "" {
		if g, err := user.LookupGroup(group); err == nil {
			n, _ := strconv.ParseUint(g.Gid, 10, 32)
			for _, mine := range append(a.Groups, a.GID) {
				if mine == uint32(n) {
					a.GID = uint32(n)
				}
			}
		}
	}
	if a.Home == "" {
		a.Home = "/"
	}
	return a, nil
}

// loginShell reads the user's shell from /etc/passwd (the user database
// interface of Go does not expose it); /bin/sh when unknown.
func loginShell(name string) string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return "/bin/sh"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 7 && fields[0] == name && fields[6] != "" {
			if _, err := os.Stat(fields[6]); err == nil && !strings.HasSuffix(fields[6], "nologin") && !strings.HasSuffix(fields[6], "/false") {
				return fields[6]
			}
		}
	}
	return "/bin/sh"
}

// UserName is the name of the user uid.
func UserName(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// Current is the account of this process's effective user.
func Current() (*Account, error) {
	name, err := UserName(uint32(os.Geteuid()))
	if err != nil {
		return nil, err
	}
	return Lookup(name, "")
}

// Identity describes a local caller (as the kernel reports a Unix-socket
// peer) for a server that is told who asks: the mom's relay and a
// follower member's relay stamp each request with it.
func Identity(uid, gid uint32, host string) *proto.Identity {
	id := &proto.Identity{UID: uid, GID: gid, Host: host, User: strconv.FormatUint(uint64(uid), 10)}
	if name, err := UserName(uid); err == nil {
		id.User = name
	}
	return id
}
