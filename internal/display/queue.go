package display

import (
	"io"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// counts are the per-state job counts of a queue or server.
type counts struct{ que, run, hld, wat, trn, ext, cpt string }

// readCounts reads state_count; each count is cut to five characters, with
// OpenPBS's '*' mark when mark is set.
func readCounts(v string, mark bool) counts {
	m := stateCounts(v)
	f := func(name string) string {
		n, ok := m[name]
		if !ok || n == "" {
			return "0"
		}
		n = cell(n, "0")
		if mark {
			return star(n, 5)
		}
		return cut(n, 5)
	}
	return counts{f("Queued"), f("Running"), f("Held"), f("Waiting"), f("Transit"), f("Exiting"), f("Complete")}
}

// QueueTable writes "qstat -Q": a header and a line per queue with its
// limit, job total, enabled and started flags, counts by state and type.
// With no queues it writes nothing.
func QueueTable(w io.Writer, queues []proto.Status, o Options) error {
	if len(queues) == 0 {
		return nil
	}
	e := &errWriter{w: w}
	if o.torque() {
		e.print(torqueQueueRow("Queue", "Max", "Tot", "Ena", "Str", "Que", "Run", "Hld", "Wat", "Trn", "Ext", "T", "Cpt"))
		e.print(torqueQueueRow("----------------", "---", "----", "--", "--", "---", "---", "---", "---", "---", "---", "-", "---"))
	} else {
		e.print("Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type\n" +
			"---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ----\n")
	}
	for _, q := range queues {
		attr := func(name string) string {
			v, _ := get(q.Attrs, name, "")
			return v
		}
		ena, str := "no", "no"
		if istrue(attr(proto.AttrEnabled)) {
			ena = "yes"
		}
		if istrue(attr(proto.AttrStarted)) {
			str = "yes"
		}
		max := cell(attr(proto.AttrMaxRunning), "0")
		tot := cell(attr(proto.AttrTotalJobs), "0")
		typ := cell(attr(proto.AttrQueueTypeQ), "")
		name := cell(q.Name, noText)
		if o.torque() {
			c := readCounts(attr(proto.AttrStateCount), false)
			if typ == "" {
				typ = "not defined"
			}
			e.print(torqueQueueRow(cut(name, 16), cut(max, 5), cut(tot, 6), ena, str,
				c.que, c.run, c.hld, c.wat, c.trn, c.ext, cut(typ, 1), c.cpt))
			continue
		}
		c := readCounts(attr(proto.AttrStateCount), true)
		if typ == "" {
			typ = "not defined"
		} else {
			typ = star(typ, 4)
		}
		e.print(left(star(name, 16), 16) + " " + right(star(max, 5), 5) + " " + right(star(tot, 5), 5) + " " +
			right(ena, 3) + " " + right(str, 3) + " " + right(c.que, 5) + " " + right(c.run, 5) + " " +
			right(c.hld, 5) + " " + right(c.wat, 5) + " " + right(c.trn, 5) + " " + right(c.ext, 5) + " " +
			left(typ, 4) + "\n")
	}
	return e.err
}

// torqueQueueRow lays out one line of Torque's -Q table; Torque prints its
// header through the same layout.
func torqueQueueRow(name, max, tot, ena, str, que, run, hld, wat, trn, ext, typ, cpt string) string {
	return left(name, 16) + " " + right(max, 5) + " " + right(tot, 6) + " " + right(ena, 5) + " " +
		right(str, 5) + " " + right(que, 5) + " " + right(run, 5) + " " + right(hld, 5) + " " +
		right(wat, 5) + " " + right(trn, 5) + " " + right(ext, 5) + " " + left(typ, 1) + " " + right(cpt, 5) + "\n"
}

// ServerTable writes "qstat -B": a header and a line per server with its
// limit, job total, counts by state and state.
func ServerTable(w io.Writer, servers []proto.Status, o Options) error {
	if len(servers) == 0 {
		return nil
	}
	e := &errWriter{w: w}
	if o.torque() {
		e.print(torqueServerRow("Server", "Max", "Tot", "Que", "Run", "Hld", "Wat", "Trn", "Ext", "Com", "Status"))
		e.print(torqueServerRow("----------------", "---", "---", "---", "---", "---", "---", "---", "---", "---", "----------"))
	} else {
		e.print("Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n" +
			"---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n")
	}
	for _, s := range servers {
		attr := func(name string) string {
			v, _ := get(s.Attrs, name, "")
			return v
		}
		name := cell(s.Name, noText)
		max := cell(attr(proto.AttrMaxRunning), "0")
		tot := cell(attr(proto.AttrTotalJobs), "0")
		status := cell(attr(proto.AttrServerState), "")
		if o.torque() {
			c := readCounts(attr(proto.AttrStateCount), false)
			e.print(torqueServerRow(cut(name, 16), cut(max, 5), cut(tot, 5), c.que, c.run, c.hld, c.wat,
				c.trn, c.ext, c.cpt, cut(status, 10)))
			continue
		}
		c := readCounts(attr(proto.AttrStateCount), true)
		e.print(left(star(name, 16), 16) + " " + right(star(max, 5), 5) + " " + right(star(tot, 5), 5) + " " +
			right(c.que, 5) + " " + right(c.run, 5) + " " + right(c.hld, 5) + " " + right(c.wat, 5) + " " +
			right(c.trn, 5) + " " + right(c.ext, 5) + " " + left(star(status, 10), 10) + "\n")
	}
	return e.err
}

func torqueServerRow(name, max, tot, que, run, hld, wat, trn, ext, com, status string) string {
	return left(name, 16) + " " + right(max, 5) + " " + right(tot, 5) + " " + right(que, 5) + " " +
		right(run, 5) + " " + right(hld, 5) + " " + right(wat, 5) + " " + right(trn, 5) + " " +
		right(ext, 5) + " " + right(com, 5) + " " + left(status, 10) + "\n"
}

// AltQueueTable writes "qstat -q": the server line, a line per queue with
// its maximum memory, cput, walltime and node count, running and queued
// jobs, run limit and enabled/started state, and the totals. With no
// queues it writes nothing.
func AltQueueTable(w io.Writer, queues []proto.Status, o Options) error {
	if len(queues) == 0 {
		return nil
	}
	e := &errWriter{w: w}
	e.print("\nserver: ", printable(o.ServerName), "\n\n")
	pad := "  --   " // OpenPBS's filler
	if o.torque() {
		pad = "--   "
		e.print("Queue            Memory CPU Time Walltime Node  Run Que Lm  State\n" +
			"---------------- ------ -------- -------- ----  --- --- --  -----\n")
	} else {
		e.print("Queue            Memory CPU Time Walltime Node   Run   Que   Lm  State\n" +
			"---------------- ------ -------- -------- ---- ----- ----- ----  -----\n")
	}
	totRun, totQue := 0, 0
	for _, q := range queues {
		val := func(name, res, def string) string {
			if v, ok := get(q.Attrs, name, res); ok && v != "" {
				return cell(v, def)
			}
			return def
		}
		mem := "--  "
		if v, ok := get(q.Attrs, proto.AttrResourcesMax, proto.ResMem); ok && v != "" {
			if o.torque() {
				mem = cell(torqueSize(v, o.Size), noText)
			} else {
				mem = cell(proSize(v, o.Size), noText)
			}
		}
		cput := val(proto.AttrResourcesMax, proto.ResCput, pad)
		wall := val(proto.AttrResourcesMax, proto.ResWalltime, pad)
		nodect := val(proto.AttrResourcesMax, proto.ResNodect, "-- ")
		jmax := val(proto.AttrMaxRunning, "", pad)
		sc, _ := get(q.Attrs, proto.AttrStateCount, "")
		m := stateCounts(sc)
		n := func(k string) int { v, _ := strconv.Atoi(m[k]); return v }
		que, run := n("Queued")+n("Held")+n("Waiting"), n("Running")
		totQue += que
		totRun += run
		ena, sta := "D", "S"
		if v, _ := get(q.Attrs, proto.AttrEnabled, ""); strings.HasPrefix(v, "T") {
			ena = "E"
		}
		if v, _ := get(q.Attrs, proto.AttrStarted, ""); strings.HasPrefix(v, "T") {
			sta = "R"
		}
		name := cell(q.Name, noText)
		if o.torque() {
			e.print(leftCut(name, 16) + " " + rightCut(mem, 6) + " " + rightCut(cput, 8) + " " + rightCut(wall, 8) + " " +
				rightCut(nodect, 5) + " " + right(strconv.Itoa(run), 3) + " " + right(strconv.Itoa(que), 3) + " " +
				rightCut(jmax, 2) + "   " + ena + " " + sta + "\n")
			continue
		}
		e.print(leftCut(name, 16) + " " + rightCut(mem, 6) + " " + rightCut(cput, 8) + " " + rightCut(wall, 8) + " " +
			rightCut(nodect, 4) + " " + right(strconv.Itoa(run), 5) + " " + right(strconv.Itoa(que), 5) + " " +
			rightCut(jmax, 4) + "   " + ena + " " + sta + "\n")
	}
	indent := strings.Repeat(" ", 47)
	e.print(indent+"----- -----\n", indent, right(strconv.Itoa(totRun), 5), " ", right(strconv.Itoa(totQue), 5), "\n")
	return e.err
}
