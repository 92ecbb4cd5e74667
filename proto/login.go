package proto

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// loginLabel separates login keys from every other use of the cluster key.
const loginLabel = "gopbs-login-v1\x00"

// LoginKey is the key the login agent of host authenticates with
// (RoleLogin, Hello.Name = host): HMAC-SHA256 of the host's name under the
// cluster key. A login host holds only its own: it cannot act as a mom,
// a scheduler or a server, nor as another login host, and the cluster key
// cannot be worked back from it.
func LoginKey(cluster []byte, host string) []byte {
	m := hmac.New(sha256.New, cluster)
	m.Write([]byte(loginLabel))
	m.Write([]byte(host))
	return m.Sum(nil)
}

// ErrCommandOverTCP refuses a command's Hello on a daemon's TCP port.
var ErrCommandOverTCP = errors.New("commands must use the server's local socket, or on other hosts the local pbs_mom's or pbs_login's")

// BatchPortKey is the batch port's rule for a peer's Hello, the server's
// and every member's of its group: the cluster key for daemons, the
// login key of its name for a login agent; commands are refused (they
// come through a local socket). cluster nil refuses every role.
func BatchPortKey(cluster []byte, hi Hello) ([]byte, error) {
	switch {
	case hi.Role == RoleClient:
		return nil, ErrCommandOverTCP
	case cluster == nil:
		return nil, errors.New("no cluster key configured")
	case hi.Role == RoleLogin:
		if hi.Name == "" {
			return nil, fmt.Errorf("a login agent must name its host")
		}
		return LoginKey(cluster, hi.Name), nil
	}
	return cluster, nil
}
