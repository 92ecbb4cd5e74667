// Package pbswebtoken is pbs_webtoken's logic; cmd/pbs_webtoken documents the command.
package pbswebtoken

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/webtoken"
)

const usage = "usage: pbs_webtoken USER | pbs_webtoken -d USER | pbs_webtoken -l\n"

// Main is pbs_webtoken's whole main (cmd/pbs_webtoken calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbs_webtoken:", err)
		os.Exit(2)
	}
	os.Exit(run(cfg.WebTokens(), os.Args[1:], time.Now, os.Stdout, os.Stderr))
}

func run(path string, args []string, now func() time.Time, stdout, stderr io.Writer) int {
	if cmdutil.Help(args, false) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	opts, rest, err := getopt.Spec{Short: "dl"}.Parse(args)
	if err != nil || len(opts) > 1 || (len(opts) == 1 && opts[0].Name == 'l') != (len(rest) == 0) || len(rest) > 1 {
		if err != nil {
			fmt.Fprintln(stderr, "pbs_webtoken:", err)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "pbs_webtoken:", err)
		return 1
	}
	if err := ownerOnly(filepath.Dir(path)); err != nil {
		return fail(err)
	}
	unlock, err := lock(path + ".lock")
	if err != nil {
		return fail(err)
	}
	defer unlock()
	entries, err := webtoken.Load(path)
	if err != nil {
		return fail(err)
	}
	switch {
	case len(opts) == 1 && opts[0].Name == 'l':
		for _, e := range entries {
			fmt.Fprintf(stdout, "%s\t%s\n", e.User, time.Unix(e.Created, 0).UTC().Format(time.RFC3339))
		}
		return 0
	case len(opts) == 1: // -d
		kept := entries[:0]
		removed := 0
		for _, e := range entries {
			if e.User == rest[0] {
				removed++
				continue
			}
			kept = append(kept, e)
		}
		if removed == 0 {
			return fail(fmt.Errorf("%s holds no token", rest[0]))
		}
		if err := atomicfile.Write(path, webtoken.Format(kept), 0o600); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "revoked %d token(s) of %s\n", removed, rest[0])
		return 0
	}
	user := rest[0]
	if !webtoken.ValidUser(user) {
		fmt.Fprintf(stderr, "pbs_webtoken: %q is not a user name\n", user)
		return 2
	}
	tok, err := webtoken.New()
	if err != nil {
		return fail(err)
	}
	entries = append(entries, webtoken.Entry{User: user, Hash: webtoken.Hash(tok), Created: now().Unix()})
	if err := atomicfile.Write(path, webtoken.Format(entries), 0o600); err != nil {
		return fail(err)
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// ownerOnly refuses callers other than the owner of server_priv: the
// file is the server's, and a token is an identity.
func ownerOnly(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("only the owner of %s (uid %d, the user pbs_server runs as) issues web tokens", dir, st.Uid)
	}
	return nil
}

// lock holds an exclusive lock on path until the returned function runs,
// so that two runs at once do not lose each other's token.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
