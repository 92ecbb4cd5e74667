package testcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Group is a replicated server group on this machine (PBS_SERVER_PEERS):
// one Cluster per member, each with its own PBS_HOME, ports and
// scheduler port, sharing the cluster key and the job ids' server name.
type Group struct {
	Members []*Cluster
	// Peers is the PBS_SERVER_PEERS value.
	Peers string
	// WebAddrs are the members' PBS_WEB addresses, by member (NewGroupWeb;
	// nil: none serves the web page).
	WebAddrs []string
}

// NewGroupWeb is NewGroup with every member given a PBS_WEB of its own
// (the leader serves it).
func NewGroupWeb(t TB, n int, args ...string) *Group {
	t.Helper()
	return newGroup(t, n, true, args...)
}

// groupPort is a free batch port whose raft port (+RaftPortOffset) is
// free too.
func groupPort(t TB) int {
	for {
		p := FreePort(t)
		if p+config.RaftPortOffset > 65535 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+config.RaftPortOffset))
		if err == nil {
			l.Close()
			return p
		}
	}
}

// NewGroup starts n members and waits until the group answers through
// the first member's socket. args are extra pbs_server flags.
func NewGroup(t TB, n int, args ...string) *Group {
	t.Helper()
	return newGroup(t, n, false, args...)
}

// NewGroupFromEmptyHomes starts n members as README's group section
// tells an admin to: every PBS_HOME empty but for its pbs.conf, the first
// member started alone (it makes the cluster key), its key copied to the
// others' PBS_HOME/auth, then the others started.
func NewGroupFromEmptyHomes(t TB, n int) *Group {
	t.Helper()
	return startGroup(t, n, false, true)
}

func newGroup(t TB, n int, withWeb bool, args ...string) *Group {
	t.Helper()
	return startGroup(t, n, withWeb, false, args...)
}

func startGroup(t TB, n int, withWeb, emptyHomes bool, args ...string) *Group {
	t.Helper()
	g := &Group{}
	bin := Build(t)
	var peers []string
	for i := 0; i < n; i++ {
		c := &Cluster{T: t, Bin: bin, started: time.Now(), serverArgs: args}
		c.Home = tempHome(t)
		c.BatchPort, c.MomPort, c.SchedPort = groupPort(t), FreePort(t), FreePort(t)
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", c.BatchPort))
		g.Members = append(g.Members, c)
		if withWeb {
			g.WebAddrs = append(g.WebAddrs, fmt.Sprintf("127.0.0.1:%d", FreePort(t)))
		}
	}
	g.Peers = strings.Join(peers, ",")
	keyFile := filepath.Join(g.Members[0].Home, "auth", "cluster.key")
	if emptyHomes {
		first := g.Members[0]
		g.writeConf(first)
		first.mu.Lock()
		first.startServerProc()
		first.mu.Unlock()
		t.Cleanup(first.Stop)
		ok, _ := Poll(30*time.Second, func() (bool, string) { _, err := os.Stat(keyFile); return err == nil, "" })
		if !ok {
			t.Fatalf("the first member made no cluster key in %s within 30s\n%s", keyFile, first.ServerLog())
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := proto.LoadOrCreateKey(keyFile); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range g.Members {
		if emptyHomes && i == 0 {
			continue
		}
		g.configure(c)
		c.mu.Lock()
		c.startServerProc()
		c.mu.Unlock()
		t.Cleanup(c.Stop)
	}
	first := g.Members[0]
	ok, _ := Poll(30*time.Second, func() (bool, string) {
		return first.run(nil, nil, "qstat", "-B").Code == 0, ""
	})
	if !ok {
		t.Fatalf("the group did not answer within 30s\n%s", first.ServerLog())
	}
	first.MustRun("qmgr", "-c", "set server acl_roots = root@*")
	return g
}

// configure writes a member's pbs.conf (PBS_SERVER_PEERS as g.Peers) and
// gives it the first member's cluster key.
func (g *Group) configure(c *Cluster) {
	t := c.T
	g.writeConf(c)
	keyFile := filepath.Join(c.Home, "auth", "cluster.key")
	key, err := os.ReadFile(filepath.Join(g.Members[0].Home, "auth", "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeConf writes a member's pbs.conf.
func (g *Group) writeConf(c *Cluster) {
	t := c.T
	c.Conf = filepath.Join(c.Home, "pbs.conf")
	conf := fmt.Sprintf("PBS_HOME=%s\nPBS_EXEC=%s\nPBS_SERVER=localhost\nPBS_BATCH_SERVICE_PORT=%d\nPBS_MOM_SERVICE_PORT=%d\nPBS_SCHEDULER_SERVICE_PORT=%d\nPBS_SERVER_HOST_NAME=127.0.0.1\nPBS_SERVER_PEERS=%s\n",
		c.Home, c.Bin, c.BatchPort, c.MomPort, c.SchedPort, g.Peers)
	for i, m := range g.Members {
		if m == c && i < len(g.WebAddrs) {
			conf += "PBS_WEB=" + g.WebAddrs[i] + "\n"
		}
	}
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// AddMember starts a new member with pbs_server -ha-join (it waits to be
// added: qmgr's server_members +=) and returns it with its batch address.
// The others' pbs.conf are left as they were.
func (g *Group) AddMember(t TB) (*Cluster, string) {
	t.Helper()
	c := &Cluster{T: t, Bin: g.Members[0].Bin, started: time.Now(), serverArgs: []string{"-ha-join"}}
	c.Home = tempHome(t)
	c.BatchPort, c.MomPort, c.SchedPort = groupPort(t), FreePort(t), FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", c.BatchPort)
	g.Peers += "," + addr
	g.configure(c)
	g.Members = append(g.Members, c)
	c.mu.Lock()
	c.startServerProc()
	c.mu.Unlock()
	t.Cleanup(c.Stop)
	return c, addr
}

// Leader is the index of the member that leads now (qstat -Bf through
// member from), or -1.
func (g *Group) Leader(from int) int {
	r := g.Members[from].Run("qstat", "-Bf", "-1")
	if r.Code != 0 {
		return -1
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != proto.AttrServerLeader {
			continue
		}
		for i, c := range g.Members {
			if strings.TrimSpace(v) == fmt.Sprintf("127.0.0.1:%d", c.BatchPort) {
				return i
			}
		}
	}
	return -1
}
