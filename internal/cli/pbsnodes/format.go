package pbsnodes

import (
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

// formatter renders node status replies. It is pure: everything it shows
// comes from its fields and arguments.
type formatter struct {
	p      config.Personality
	loc    *time.Location // zone of ctime strings (UTC when nil)
	server string         // short server name, dropped from job ids in -Sj tables
	long   bool           // -L: summary cells are not truncated
	delim  string         // -D for -F dsv ("|" when empty)
}

// printable is v safe for one line of text: newlines and other control
// characters are shown escaped, exactly as qstat -f shows them.
// display.AttrLine does that escaping; its fixed prefix is removed here.
func printable(v string) string {
	line := display.AttrLine("", v, 0, true)
	return strings.TrimSuffix(strings.TrimPrefix(line, "     = "), "\n")
}

// attrLine is one attribute of a -a listing: five blanks, "name = value".
func attrLine(name, value string) string {
	return " " + display.AttrLine(name, value, 0, true)
}

// isNodeTime reports whether a listing shows attribute a as a ctime
// string (OpenPBS converts these two node times).
func isNodeTime(a proto.Attr) bool {
	return a.Resource == "" && (a.Name == proto.AttrNodeLastState || a.Name == proto.AttrNodeLastUsed)
}

// full writes the -a listing: per node its name, one line per attribute
// and a blank line. pbspro shows the server's attributes in its order with
// times as ctime strings; torque shows the Torque view (torqueView).
func (f *formatter) full(w io.Writer, nodes []proto.Status) error {
	var b strings.Builder
	for _, s := range nodes {
		b.WriteString(printable(s.Name) + "\n")
		if f.p == config.Torque {
			for _, kv := range torqueView(s) {
				b.WriteString(attrLine(kv.name, kv.value))
			}
		} else {
			for _, a := range s.Attrs {
				v := a.Value
				if isNodeTime(a) {
					v = display.FormatTime(v, f.loc)
				}
				b.WriteString(attrLine(a.FullName(), v))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kv is one attribute of the Torque view.
type kv struct{ name, value string }

// torqueView is a node as Torque 6's pbsnodes shows it, built only from
// what the server reports: state (job-busy named job-exclusive),
// power_state = Running, np (assigned ncpus, else the mom's pcpus),
// properties, ntype = cluster, jobs as "slot/jobid" items, status (the
// mom's facts: opsys from arch, physmem, ncpus, loadave), note (the
// comment), mom_service_port (Port) and gpus (ngpus). Attributes with
// nothing to show are left out; nothing is invented (no uname, sessions,
// sockets or manager port, which the server does not know).
func torqueView(s proto.Status) []kv {
	var out []kv
	add := func(name, value string) { out = append(out, kv{name, value}) }
	get := func(full string) string { v, _ := s.Get(full); return strings.TrimSpace(v) }

	if v, ok := s.Get(proto.AttrNodeState); ok {
		add("state", torqueState(v))
	}
	add("power_state", "Running")
	np := get(proto.AttrResourcesAvail + "." + proto.ResNcpus)
	if np == "" {
		np = get(proto.AttrNodePcpus)
	}
	if np != "" {
		add(proto.AttrNodeNp, np)
	}
	if v := get(proto.AttrNodeProperties); v != "" {
		add(proto.AttrNodeProperties, v)
	}
	add(proto.AttrNodeNtype, "cluster")
	if slots := display.ParseNodeJobs(get(proto.AttrNodeJobs)); len(slots) > 0 {
		items := make([]string, len(slots))
		for i, js := range slots {
			items[i] = js.ID
			if js.Slot != "" {
				items[i] = js.Slot + "/" + js.ID
			}
		}
		add(proto.AttrNodeJobs, strings.Join(items, ","))
	}
	var status []string
	for _, it := range []struct{ key, attr string }{
		{"opsys", proto.AttrResourcesAvail + "." + proto.ResArch},
		{"physmem", proto.AttrResourcesAvail + "." + proto.ResMem},
		{"ncpus", proto.AttrNodePcpus},
		{"loadave", proto.AttrNodeLoadave},
	} {
		if v := get(it.attr); v != "" {
			status = append(status, it.key+"="+v)
		}
	}
	if len(status) > 0 {
		add(proto.AttrNodeStatus, strings.Join(status, ","))
	}
	if v := get(proto.AttrNodeNote); v != "" {
		add(proto.AttrNodeNoteTorque, v)
	}
	if v := get(proto.AttrNodePort); v != "" {
		add("mom_service_port", v)
	}
	if v := get(proto.AttrResourcesAvail + "." + proto.ResNgpus); v != "" {
		add("gpus", v)
	}
	return out
}

// torqueXML writes Torque's pbsnodes -x: one line holding a <Data>
// document with a <Node> per node, its <name> and the Torque view as
// elements. Values are escaped, so the document is well-formed whatever
// they hold.
func (f *formatter) torqueXML(w io.Writer, nodes []proto.Status) error {
	var b strings.Builder
	elem := func(name, value string) {
		b.WriteString("<" + name + ">")
		xml.EscapeText(&b, []byte(value)) // writes to a strings.Builder cannot fail
		b.WriteString("</" + name + ">")
	}
	b.WriteString("<Data>")
	for _, s := range nodes {
		b.WriteString("<Node>")
		elem("name", s.Name)
		for _, kv := range torqueView(s) {
			elem(kv.name, kv.value)
		}
		b.WriteString("</Node>")
	}
	b.WriteString("</Data>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// markedLine is one line of -l: "%-20.20s %s" (name, state), or with -n
// and a note "%-20.20s %-26.26s %s" (name, state, note), as Torque prints
// them. torque names the states the Torque way.
func (f *formatter) markedLine(name, state, note string) string {
	if f.p == config.Torque {
		state = torqueState(state)
	}
	if note == "" {
		return cell(name, 20, true, true) + " " + printable(state) + "\n"
	}
	return cell(name, 20, true, true) + " " + cell(state, 26, true, true) + " " + printable(note) + "\n"
}

// cell is printf's %-W.Ws (left) or %W.Ws, counted in runes so that a cut
// never splits a character; without cut, %-Ws or %Ws.
func cell(v string, width int, left, cut bool) string {
	v = printable(v)
	if cut && utf8.RuneCountInString(v) > width {
		i := 0
		for pos := range v {
			if i == width {
				v = v[:pos]
				break
			}
			i++
		}
	}
	pad := width - utf8.RuneCountInString(v)
	if pad <= 0 {
		return v
	}
	if left {
		return v + strings.Repeat(" ", pad)
	}
	return strings.Repeat(" ", pad) + v
}

// fullDSV writes -a -F dsv: per node one line, "Name=<node>" and every
// "name=value" separated by the delimiter (display.DSV's escaping), times
// as Unix seconds and the jobs list without blanks, as OpenPBS does.
func (f *formatter) fullDSV(w io.Writer, nodes []proto.Status) error {
	out := make([]proto.Status, len(nodes))
	for i, s := range nodes {
		attrs := make([]proto.Attr, len(s.Attrs))
		for k, a := range s.Attrs {
			if a.Name == proto.AttrNodeJobs && a.Resource == "" {
				a.Value = strings.ReplaceAll(a.Value, " ", "")
			}
			attrs[k] = a
		}
		out[i] = proto.Status{Name: s.Name, Attrs: attrs}
	}
	return display.DSV(w, "Name=", out, false, display.Options{Personality: f.p, Delim: f.delim})
}

// counts is a consumable resource of a node for the summaries.
type counts struct{ free, total int64 }

func (c counts) freeTotal() string {
	return strconv.FormatInt(c.free, 10) + "/" + strconv.FormatInt(c.total, 10)
}

// summary is one node of the -S and -Sj views.
type summary struct {
	name, state, os, hardware, host, queue, comment string
	memKB, memUsedKB                                int64
	memRaw                                          string // an unreadable mem value, shown as is
	ncpus, nmics, ngpus                             counts
	jobs                                            []string // distinct job ids
}

// summarize reads the summary fields of a node. Missing text fields show
// as "--" and missing numbers as 0, as OpenPBS shows them.
func (f *formatter) summarize(s proto.Status) summary {
	text := func(full string) string {
		if v, _ := s.Get(full); strings.TrimSpace(v) != "" {
			return v
		}
		return "--"
	}
	num := func(full string) int64 {
		v, _ := s.Get(full)
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n
	}
	res := func(r string) counts {
		total := num(proto.AttrResourcesAvail + "." + r)
		return counts{free: total - num(proto.AttrResourcesAssigned+"."+r), total: total}
	}
	m := summary{
		name:     s.Name,
		state:    text(proto.AttrNodeState),
		os:       text(proto.AttrResourcesAvail + ".OS"),
		hardware: text(proto.AttrResourcesAvail + ".hardware"),
		host:     text(proto.AttrResourcesAvail + "." + proto.ResHost),
		queue:    text(proto.AttrQueue),
		comment:  text(proto.AttrNodeNote),
		ncpus:    res(proto.ResNcpus),
		nmics:    res("nmics"),
		ngpus:    res(proto.ResNgpus),
	}
	if !f.long {
		if items := stateItems(m.state); len(items) > 0 {
			m.state = items[0] // the first item says the most
		}
	}
	if v, ok := s.Get(proto.AttrResourcesAvail + "." + proto.ResMem); ok && strings.TrimSpace(v) != "" {
		if kb, ok := sizeKB(v); ok {
			m.memKB = kb
		} else {
			m.memRaw = v
		}
	}
	if v, ok := s.Get(proto.AttrResourcesAssigned + "." + proto.ResMem); ok {
		m.memUsedKB, _ = sizeKB(v)
	}
	v, _ := s.Get(proto.AttrNodeJobs)
	m.jobs = display.NodeJobIDs(v)
	return m
}

func (m summary) memTotal() string {
	if m.memRaw != "" {
		return m.memRaw
	}
	return shortSize(m.memKB)
}

func (m summary) memFreeTotal() string {
	if m.memRaw != "" {
		return m.memRaw
	}
	free := m.memKB - m.memUsedKB
	sign := ""
	if free < 0 {
		sign, free = "-", -free // over-committed memory shows as such
	}
	return sign + shortSize(free) + "/" + shortSize(m.memKB)
}

// Headers of the summary tables, as OpenPBS prints them.
const (
	nodeSummaryHeader = "vnode           state           OS       hardware host            queue        mem     ncpus   nmics   ngpus  comment\n" +
		"--------------- --------------- -------- -------- --------------- ---------- -------- ------- ------- ------- ---------\n"
	jobSummaryHeader = "                                                        mem       ncpus   nmics   ngpus\n" +
		"vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs\n" +
		"--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------\n"
)

// summaryTable writes -S ("%-15.15s %-15.15s %-8.8s %-8.8s %-15.15s
// %-10.10s %8.8s %7.7s %7.7s %7.7s %s") or -Sj ("%-15.15s %-15.15s %6d
// %5d %6d %12.12s %7.7s %7.7s %7.7s %s"); -L drops the truncation. The
// header is printed when there is a node to show.
func (f *formatter) summaryTable(w io.Writer, nodes []proto.Status, jobView bool) error {
	var b strings.Builder
	cut := !f.long
	for i, s := range nodes {
		m := f.summarize(s)
		if jobView {
			if i == 0 {
				b.WriteString(jobSummaryHeader)
			}
			n := strconv.Itoa(len(m.jobs))
			jobs := "--"
			if len(m.jobs) > 0 {
				short := make([]string, len(m.jobs))
				for k, id := range m.jobs {
					short[k] = strings.TrimSuffix(id, "."+f.server)
				}
				jobs = strings.Join(short, ",")
			}
			b.WriteString(strings.Join([]string{
				cell(m.name, 15, true, cut), cell(m.state, 15, true, cut),
				cell(n, 6, false, false), cell(n, 5, false, false), cell("0", 6, false, false),
				cell(m.memFreeTotal(), 12, false, cut), cell(m.ncpus.freeTotal(), 7, false, cut),
				cell(m.nmics.freeTotal(), 7, false, cut), cell(m.ngpus.freeTotal(), 7, false, cut),
				printable(jobs),
			}, " ") + "\n")
			continue
		}
		if i == 0 {
			b.WriteString(nodeSummaryHeader)
		}
		b.WriteString(strings.Join([]string{
			cell(m.name, 15, true, cut), cell(m.state, 15, true, cut), cell(m.os, 8, true, cut),
			cell(m.hardware, 8, true, cut), cell(m.host, 15, true, cut), cell(m.queue, 10, true, cut),
			cell(m.memTotal(), 8, false, cut), cell(strconv.FormatInt(m.ncpus.total, 10), 7, false, cut),
			cell(strconv.FormatInt(m.nmics.total, 10), 7, false, cut),
			cell(strconv.FormatInt(m.ngpus.total, 10), 7, false, cut),
			printable(m.comment),
		}, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryDSV writes -S -F dsv ("vnode=..|state=..|OS=..|hardware=..|
// host=..|queue=..|mem=..|ncpus=..|nmics=..|ngpus=..|comment=..") or -Sj
// -F dsv ("vnode=..|state=..|njobs=..|run=..|susp=..|mem(f/t)=..|
// ncpus(f/t)=..|nmics(f/t)=..|ngpus(f/t)=..|jobs=.."), one line per node.
// A delimiter or backslash inside a value is escaped with a backslash.
func (f *formatter) summaryDSV(w io.Writer, nodes []proto.Status, jobView bool) error {
	d := f.delim
	if d == "" {
		d = "|"
	}
	esc := func(v string) string {
		v = strings.ReplaceAll(v, `\`, `\\`)
		return printable(strings.ReplaceAll(v, d, `\`+d))
	}
	var b strings.Builder
	for _, s := range nodes {
		m := f.summarize(s)
		var fields []kv
		if jobView {
			n := strconv.Itoa(len(m.jobs))
			jobs := "--"
			if len(m.jobs) > 0 {
				jobs = strings.Join(m.jobs, ",")
			}
			fields = []kv{{"vnode", m.name}, {"state", m.state}, {"njobs", n}, {"run", n}, {"susp", "0"},
				{"mem(f/t)", m.memFreeTotal()}, {"ncpus(f/t)", m.ncpus.freeTotal()},
				{"nmics(f/t)", m.nmics.freeTotal()}, {"ngpus(f/t)", m.ngpus.freeTotal()}, {"jobs", jobs}}
		} else {
			fields = []kv{{"vnode", m.name}, {"state", m.state}, {"OS", m.os}, {"hardware", m.hardware},
				{"host", m.host}, {"queue", m.queue}, {"mem", m.memTotal()},
				{"ncpus", strconv.FormatInt(m.ncpus.total, 10)}, {"nmics", strconv.FormatInt(m.nmics.total, 10)},
				{"ngpus", strconv.FormatInt(m.ngpus.total, 10)}, {"comment", m.comment}}
		}
		for i, fl := range fields {
			if i > 0 {
				b.WriteString(d)
			}
			b.WriteString(fl.name + "=" + esc(fl.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
