package testcluster

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// dayFormat names the daemons' daily files (server_logs, sched_logs,
// mom_logs, server_priv/accounting), in local time as they write them.
const dayFormat = "20060102"

// ReadDaily returns the daily files of dir (named YYYYMMDD) from the day
// of from on, concatenated in date order. A daemon switches files at
// midnight, so a test that runs across it reads both days; the files of
// earlier days are not the test's. Other names are left out.
func ReadDaily(dir string, from time.Time) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	first := from.Format(dayFormat)
	var days []string
	for _, e := range ents {
		name := e.Name()
		if _, err := time.Parse(dayFormat, name); err != nil || len(name) != len(dayFormat) || e.IsDir() {
			continue
		}
		if name >= first {
			days = append(days, name)
		}
	}
	sort.Strings(days)
	var b strings.Builder
	for _, day := range days {
		data, _ := os.ReadFile(filepath.Join(dir, day))
		b.Write(data)
	}
	return b.String()
}

// SchedLog returns the scheduler's sched_logs since the cluster started.
func (c *Cluster) SchedLog() string {
	return ReadDaily(filepath.Join(c.Home, "sched_logs"), c.started)
}

// DailyServerLog returns the server's server_logs since the cluster
// started (ServerLog is its stderr).
func (c *Cluster) DailyServerLog() string {
	return ReadDaily(filepath.Join(c.Home, "server_logs"), c.started)
}

// Accounting returns the accounting records (server_priv/accounting)
// since the cluster started.
func (c *Cluster) Accounting() string {
	return ReadDaily(filepath.Join(c.Home, "server_priv", "accounting"), c.started)
}

// WaitAccounting waits until the accounting log holds every one of want
// and returns it: the server writes a record once the change it records is
// durable, which may be just after a status already shows the change (a
// job's E record after qstat shows it finished).
func (c *Cluster) WaitAccounting(want ...string) string {
	c.T.Helper()
	var acct string
	WaitFor(c.T, "accounting records "+strings.Join(want, ", "), 15*time.Second, func() (bool, string) {
		acct = c.Accounting()
		for _, w := range want {
			if !strings.Contains(acct, w) {
				return false, acct
			}
		}
		return true, acct
	})
	return acct
}
