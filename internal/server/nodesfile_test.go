package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// server_priv/nodes creates the nodes the store lacks at start; a bad
// file stops the server naming the line; a node already defined keeps
// the store's definition.
func TestNodesFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	priv := filepath.Join(dir, "server_priv")
	os.MkdirAll(priv, 0o750)
	os.WriteFile(filepath.Join(priv, "nodes"), []byte("n1 np=4 bigmem\nts1:ts np=2\n"), 0o644)
	s, c := newTestServerAt(t, dir, func(*Config) {})
	nodes, _, err := c.StatusNodes(&proto.StatusRequest{})
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	got := map[string]string{}
	for _, n := range nodes {
		for _, a := range n.Attrs {
			got[n.Name+" "+a.Name+"."+a.Resource] = a.Value
		}
	}
	for k, want := range map[string]string{"ts1 ntype.": "time-shared", "n1 ntype.": "PBS", "ts1 resources_available.ncpus": "2",
		"n1 resources_available.ncpus": "4", "n1 properties.": "bigmem"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	// Restart with a changed file: the store's definition stays.
	c.Close()
	s.Close()
	os.WriteFile(filepath.Join(priv, "nodes"), []byte("n1 np=8\nts1:ts np=2\n"), 0o644)
	_, c2 := newTestServerAt(t, dir, func(*Config) {})
	nodes, _, _ = c2.StatusNodes(&proto.StatusRequest{IDs: []string{"n1"}})
	for _, a := range nodes[0].Attrs {
		if a.Name == proto.AttrResourcesAvail && a.Resource == "ncpus" && a.Value != "4" {
			t.Errorf("n1 ncpus %s after restart; the store's 4 should stay", a.Value)
		}
	}
}

func TestNodesFileRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	priv := filepath.Join(dir, "server_priv")
	os.MkdirAll(priv, 0o750)
	os.WriteFile(filepath.Join(priv, "nodes"), []byte("n1 np=4\nn2:xs\n"), 0o644)
	_, err := New(Config{Home: dir, ServerName: "srv", Host: "host", SocketPath: filepath.Join(dir, "s.sock"),
		StorePath: priv, AccountingDir: filepath.Join(priv, "accounting")})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(priv, "nodes")+":2: n2: unknown suffix") {
		t.Fatalf("New with a bad nodes file: %v", err)
	}
}
