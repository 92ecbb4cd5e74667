package proto

import (
	"bytes"
	"errors"
	"testing"
)

// The batch port's rule, role by role: a command never, a daemon with the
// cluster key, a login agent with its own name's key and only that.
func TestBatchPortKey(t *testing.T) {
	t.Parallel()
	cluster := bytes.Repeat([]byte{3}, KeySize)
	tests := []struct {
		name string
		hi   Hello
		key  []byte
		want []byte
		err  string
	}{
		{"command", Hello{Role: RoleClient}, cluster, nil, ErrCommandOverTCP.Error()},
		{"mom", Hello{Role: RoleMom, Name: "n1"}, cluster, cluster, ""},
		{"scheduler", Hello{Role: RoleSched}, cluster, cluster, ""},
		{"server", Hello{Role: RoleServer, Name: "s2"}, cluster, cluster, ""},
		{"login", Hello{Role: RoleLogin, Name: "l1"}, cluster, LoginKey(cluster, "l1"), ""},
		{"login without a name", Hello{Role: RoleLogin}, cluster, nil, "a login agent must name its host"},
		{"no cluster key", Hello{Role: RoleMom}, nil, nil, "no cluster key configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BatchPortKey(tt.key, tt.hi)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("key = %x, %v; want %x", got, err, tt.want)
			}
		})
	}
	if !errors.Is(func() error { _, err := BatchPortKey(cluster, Hello{}); return err }(), ErrCommandOverTCP) {
		t.Errorf("a command's refusal is not ErrCommandOverTCP")
	}
}

// A login key is its host's alone, and not the cluster key.
func TestLoginKeyPerHost(t *testing.T) {
	t.Parallel()
	cluster := bytes.Repeat([]byte{9}, KeySize)
	a, b := LoginKey(cluster, "l1"), LoginKey(cluster, "l2")
	if len(a) != KeySize || bytes.Equal(a, b) || bytes.Equal(a, cluster) || !bytes.Equal(a, LoginKey(cluster, "l1")) {
		t.Fatalf("login keys: l1 %x, l2 %x", a, b)
	}
	if bytes.Equal(a, LoginKey(bytes.Repeat([]byte{8}, KeySize), "l1")) {
		t.Fatalf("two clusters give l1 the same key")
	}
}
