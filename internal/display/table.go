package display

import (
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// Placeholders for missing values: the default table prints "0" for an
// absent cput (both OpenPBS and Torque do), "--" for other absent text; the
// alternate format fills with " -- " as both programs do.
const (
	noText = "--"
	blank  = " -- "
)

// Default table headers (reference §5.3). Torque's header is one column
// short of its rows; that is how Torque prints it.
const (
	proHeader = "Job id            Name             User              Time Use S Queue\n" +
		"----------------  ---------------- ----------------  -------- - -----\n"
	proWideHeader = "Job id                         Name            User             Time Use S Queue\n" +
		"-----------------------------  --------------- ---------------  -------- - ---------------\n"
	// qstat -p (OpenPBS) puts "% done" where Time Use was.
	proPercentHeader = "Job id            Name             User               % done  S Queue\n" +
		"----------------  ---------------- ----------------  -------- - -----\n"
	proWidePercentHeader = "Job id                         Name            User              % done  S Queue\n" +
		"-----------------------------  --------------- ---------------  -------- - ---------------\n"
	torqueHeader = "Job ID                    Name             User            Time Use S Queue\n" +
		"------------------------- ---------------- --------------- -------- - -----\n"
)

// JobTable writes the default qstat table: the server comment when there
// is one (PBS Pro), the header and one row per job. With no jobs it writes
// nothing at all, which is what scripts running under pipefail expect.
func JobTable(w io.Writer, jobs []proto.Status, o Options) error {
	if len(jobs) == 0 {
		return nil
	}
	e := &errWriter{w: w}
	if o.torque() {
		e.print(torqueHeader)
	} else {
		if o.ServerComment != "" {
			e.print(printable(o.ServerComment), "\n")
		}
		switch {
		case o.Wide && o.Percent:
			e.print(proWidePercentHeader)
		case o.Wide:
			e.print(proWideHeader)
		case o.Percent:
			e.print(proPercentHeader)
		default:
			e.print(proHeader)
		}
	}
	var row []byte
	for _, j := range jobs {
		row = appendJobRow(row[:0], j, o)
		e.write(row)
	}
	return e.err
}

// JobTableAttrs are the job attributes JobTable shows.
var JobTableAttrs = []string{proto.AttrJobName, proto.AttrJobOwner, proto.AttrResourcesUsed, proto.AttrJobState, proto.AttrQueue}

// appendJobRow appends one line of the default table to b.
func appendJobRow(b []byte, j proto.Status, o Options) []byte {
	attrs := present(o.Personality, j.Attrs)
	name, _ := get(attrs, proto.AttrJobName, "")
	owner, _ := get(attrs, proto.AttrJobOwner, "")
	cput, _ := get(attrs, proto.AttrResourcesUsed, "cput")
	state, _ := get(attrs, proto.AttrJobState, "")
	queue, _ := get(attrs, proto.AttrQueue, "")
	owner = userOf(owner)
	queue = userOf(queue) // a queue may come as queue@server
	if cput == "" {
		cput = "0"
	}
	if state == "" {
		state = "?"
	}
	id := cell(j.Name, noText)
	name, owner, cput, queue = cell(name, noText), cell(owner, noText), cell(cput, "0"), cell(queue, noText)
	state = cell(state, "?")

	if o.torque() {
		// Torque cuts ids longer than 23 characters to 29 (sic), and shows
		// the tail of a long name after "...", starting at a '/' if the tail
		// has one.
		if len([]rune(id)) > 23 {
			id = cut(id, 29)
		}
		b = append(appendLeft(b, id, 26), ' ')
		b = append(appendLeft(b, torqueJobName(name), 16), ' ')
		b = append(appendLeft(b, cut(owner, 15), 15), ' ')
		b = append(appendRight(b, cut(cput, 8), 8), ' ')
		b = append(append(b, cut(state, 1)...), ' ')
		return append(appendLeft(b, cut(queue, 15), 15), '\n')
	}
	// OpenPBS shows the id up to the second dot (sequence number and the
	// first label of the server name).
	if i := strings.IndexByte(id, '.'); i >= 0 {
		if k := strings.IndexByte(id[i+1:], '.'); k >= 0 {
			id = id[:i+1+k]
		}
	}
	idW, nameW, userW, queueW := 17, 16, 16, 16
	if o.Wide {
		idW, nameW, userW, queueW = 30, 15, 15, 15
	}
	if len([]rune(name)) >= nameW {
		// A name that fills the column is marked too, so that it never
		// runs into the next one.
		name = cut(name, nameW-1) + "*"
	}
	if o.Percent {
		cput = percentDone(attrs, state)
	}
	b = append(appendLeft(b, star(id, idW), idW), ' ')
	b = append(appendLeft(b, name, nameW), ' ')
	b = append(appendLeft(b, star(owner, userW), userW), ' ', ' ')
	b = append(appendRight(b, star(cput, 8), 8), ' ')
	b = append(append(b, star(state, 1)...), ' ')
	return append(appendLeft(b, star(queue, queueW), queueW), '\n')
}

// PercentAttrs are the attributes qstat -p needs besides JobTableAttrs.
var PercentAttrs = []string{proto.AttrResourceList, proto.AttrArrayStateCount}

// percentDone is qstat -p's column, by OpenPBS's rules: "--" for a job
// that has not started (Q, T, W), 100 for a finished subjob (X); for an
// array the share of its subjobs that expired; otherwise the larger of
// cput used/requested and walltime used/requested, counting only a
// resource that is requested (an unreported cput counts as 0, as
// OpenPBS does). The number keeps OpenPBS's trailing blank ("%3ld ").
func percentDone(attrs []proto.Attr, state string) string {
	const none = "-- "
	switch state {
	case "Q", "T", "W":
		return none
	case "X":
		return "100"
	}
	if counts, ok := get(attrs, proto.AttrArrayStateCount, ""); ok {
		var queued, running, exiting, expired int64
		if _, err := fmt.Sscanf(counts, "Queued:%d Running:%d Exiting:%d Expired:%d", &queued, &running, &exiting, &expired); err != nil {
			return none
		}
		if total := queued + running + exiting + expired; total > 0 {
			if pct := expired * 100 / total; pct < 1000 {
				return fmt.Sprintf("%3d ", pct)
			}
		}
		return none
	}
	pct := int64(-1)
	if req, ok := get(attrs, proto.AttrResourceList, "cput"); ok {
		used, _ := get(attrs, proto.AttrResourcesUsed, "cput")
		pct = max(pct, ratio(used, req))
	}
	if req, ok := get(attrs, proto.AttrResourceList, "walltime"); ok {
		if used, ok := get(attrs, proto.AttrResourcesUsed, "walltime"); ok {
			pct = max(pct, ratio(used, req))
		}
	}
	if pct < 0 {
		return none
	}
	return fmt.Sprintf("%3d ", pct)
}

// ratio is used/req in percent, -1 when req is zero.
func ratio(used, req string) int64 {
	bot := clockSeconds(req)
	if bot == 0 {
		return -1
	}
	return clockSeconds(used) * 100 / bot
}

// clockSeconds reads [[hh:]mm:]ss as OpenPBS's qstat does: each field is
// the leading digits of its part (a bad part counts 0), so that the
// column never fails on an odd value.
func clockSeconds(v string) int64 {
	var total int64
	for _, part := range strings.Split(v, ":") {
		n := int64(0)
		for _, c := range part {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int64(c-'0')
		}
		total = total*60 + n
	}
	return total
}

// torqueJobName shortens a job name longer than 16 characters the way Torque
// does: "..." followed by the last 13 characters, or by the part from the
// first '/' among them.
func torqueJobName(name string) string {
	r := []rune(name)
	if len(r) <= 16 {
		return name
	}
	tail := string(r[len(r)-13:])
	if i := strings.IndexByte(tail, '/'); i >= 0 {
		tail = tail[i:]
	}
	return cut("..."+tail, 16)
}

// altFields are the values of one alternate-format row before layout.
type altFields struct {
	id, user, queue, name, sess, nds, tsk, mem, reqTime, state, elap string
	execHost, comment                                                string
}

func altJob(j proto.Status, o Options) altFields {
	attrs := present(o.Personality, j.Attrs)
	f := altFields{
		id: cell(j.Name, noText), user: blank, queue: blank, name: blank, sess: blank, nds: blank,
		tsk: blank, mem: blank, reqTime: blank, state: blank, elap: blank, execHost: blank, comment: blank,
	}
	val := func(name, res string) (string, bool) {
		v, ok := get(attrs, name, res)
		if !ok || v == "" {
			return "", false
		}
		return v, true
	}
	if v, ok := val(proto.AttrJobName, ""); ok {
		f.name = cell(v, noText)
	}
	if v, ok := val(proto.AttrJobOwner, ""); ok {
		f.user = cell(userOf(v), noText)
	}
	if v, ok := val(proto.AttrJobState, ""); ok {
		f.state = cell(v, "?")
	}
	if v, ok := val(proto.AttrQueue, ""); ok {
		f.queue = cell(v, noText)
	}
	if v, ok := val(proto.AttrSessionID, ""); ok {
		f.sess = cell(v, noText)
	}
	if v, ok := val(proto.AttrResourceList, proto.ResNodect); ok {
		f.nds = cell(v, noText)
	}
	if v, ok := val(proto.AttrExecHost, ""); ok {
		f.execHost = v
	}
	if v, ok := val(proto.AttrComment, ""); ok {
		f.comment = v
	}
	cput, useCput := val(proto.AttrResourceList, proto.ResCput)
	if useCput {
		f.reqTime = cell(cput, noText)
		if v, ok := val(proto.AttrResourcesUsed, proto.ResCput); ok {
			f.elap = cell(v, noText)
		}
	} else {
		if v, ok := val(proto.AttrResourceList, proto.ResWalltime); ok {
			f.reqTime = cell(v, noText)
		}
		if v, ok := val(proto.AttrResourcesUsed, proto.ResWalltime); ok {
			f.elap = cell(v, noText)
		}
	}
	if o.EstStart {
		// Only a job that may still start shows an estimate: queued,
		// suspended, or an array that has begun (OpenPBS's Q, S, B).
		f.elap = noText
		if len(f.state) == 1 && strings.Contains("QSB", f.state) {
			v, _ := val(proto.AttrEstimated, "start_time")
			f.elap = estStart(v, o.Now.In(o.loc()))
		}
	}
	if o.torque() {
		f.tsk = torqueTasks(attrs)
		// Torque requests memory under several names; mem is the one a
		// user means most often.
		for _, r := range []string{"mem", "vmem", "pmem", "pvmem", "dmem"} {
			if v, ok := val(proto.AttrResourceList, r); ok {
				f.mem = cell(torqueSize(v, o.Size), noText)
				break
			}
		}
		if !useCput {
			switch f.state {
			case "Q", "C", "H", "W":
				f.elap = blank // Torque shows no elapsed time for jobs not running
			}
		}
	} else {
		if v, ok := val(proto.AttrResourceList, proto.ResNcpus); ok && v != "0" {
			f.tsk = cell(v, noText)
		}
		if v, ok := val(proto.AttrResourceList, proto.ResMem); ok {
			f.mem = cell(proSize(v, o.Size), noText)
		}
	}
	return f
}

// estStart renders an estimated.start_time (Unix seconds) in the five
// columns of -T's Est Start, as OpenPBS does: "--" without an estimate or
// for one already past, "?" when the scheduler has none (0), the time of
// day for today, weekday and hour within a week, the month within this
// year, the year within five years, ">5yrs" beyond.
func estStart(v string, now time.Time) string {
	if strings.TrimSpace(v) == "" {
		return noText
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n == 0 {
		return "?"
	}
	t := time.Unix(n, 0).In(now.Location())
	switch {
	case n < now.Unix():
		return noText
	case t.Year() == now.Year() && t.YearDay() == now.YearDay():
		return t.Format("15:04")
	case n-now.Unix() < 7*24*3600:
		return t.Format("Mon")[:2] + " " + t.Format("15")
	case t.Year() == now.Year():
		return t.Format("Jan")
	case t.Year()-now.Year() < 5:
		return t.Format("2006")
	}
	return ">5yrs"
}

// byEstimatedStart orders -T's rows as OpenPBS does: jobs that started
// first, by start time; then jobs whose estimate is still ahead, soonest
// first; then the others in the server's order. jobs is not modified.
func byEstimatedStart(jobs []proto.Status, now time.Time) []proto.Status {
	type key struct {
		group int
		at    int64
	}
	keyOf := func(j proto.Status) key {
		if v, ok := get(j.Attrs, proto.AttrStime, ""); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
				return key{0, n}
			}
		}
		if v, ok := get(j.Attrs, proto.AttrEstimated, "start_time"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= now.Unix() {
				return key{1, n}
			}
		}
		return key{2, 0}
	}
	keys := make([]key, len(jobs))
	idx := make([]int, len(jobs))
	for i, j := range jobs {
		keys[i], idx[i] = keyOf(j), i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		if ka.group != kb.group {
			return ka.group < kb.group
		}
		return ka.at < kb.at
	})
	out := make([]proto.Status, len(jobs))
	for i, k := range idx {
		out[i] = jobs[k]
	}
	return out
}

// torqueTasks is Torque's TSK column: the processors of a nodes= request
// (sum of nodes times ppn), else ncpus, else procs.
func torqueTasks(attrs []proto.Attr) string {
	if v, ok := get(attrs, proto.AttrResourceList, proto.ResNodes); ok {
		if n := nodesTasks(v); n > 0 {
			return strconv.Itoa(n)
		}
	}
	for _, r := range []string{proto.ResNcpus, "procs"} {
		if v, ok := get(attrs, proto.AttrResourceList, r); ok && v != "" && v != "0" {
			return cell(v, noText)
		}
	}
	return blank
}

// nodesTasks counts the processors of a Torque nodes spec such as
// "2:ppn=4+node7:ppn=2": a spec's count is its leading number (1 when it
// names a node or property), times its ppn (1 when absent).
func nodesTasks(spec string) int {
	const max = 1 << 30
	if spec == "" {
		return 0
	}
	total := 0
	for _, part := range strings.Split(spec, "+") {
		fields := strings.Split(part, ":")
		nodes, err := strconv.Atoi(fields[0])
		if err != nil || nodes <= 0 || nodes >= max {
			nodes = 1
		}
		ppn := 1
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "ppn="); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 && n < max {
					ppn = n
				}
				break
			}
		}
		if nodes*ppn >= max-total {
			return 0
		}
		total += nodes * ppn
	}
	return total
}

// sizeUnits are the magnitudes of a PBS size suffix.
const sizeUnits = " kmgtp"

// parseSize splits a PBS size ("300mb", "2gw", "1024") into its number,
// magnitude (0 bytes .. 5 petabytes) and whether it counts words.
func parseSize(v string) (n uint64, mag int, words bool, ok bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, 0, false, false
	}
	n, err := strconv.ParseUint(v[:i], 10, 64)
	if err != nil {
		return 0, 0, false, false
	}
	rest := strings.ToLower(v[i:])
	if rest != "" {
		if k := strings.IndexByte(sizeUnits[1:], rest[0]); k >= 0 {
			mag = k + 1
			rest = rest[1:]
		}
	}
	switch rest {
	case "", "b":
	case "w":
		words = true
	default:
		return 0, 0, false, false
	}
	return n, mag, words, true
}

// scale converts n from magnitude in to out, rounding up.
func scale(n uint64, in, out int) uint64 {
	for ; in < out; in++ {
		n = (n + 1023) >> 10
	}
	for ; in > out; in-- {
		if n > 1<<53 {
			return n // saturate rather than overflow
		}
		n <<= 10
	}
	return n
}

// proSize is OpenPBS's memory column: the request in its own unit, or in
// megawords (-M) or gigabytes (-G), stepped up a unit while it has more
// than four digits so that it fits.
func proSize(v string, unit SizeUnit) string {
	n, mag, words, ok := parseSize(v)
	if !ok {
		return v
	}
	if words {
		n <<= 3 // to bytes
	}
	out, suffix := mag, "b"
	if words {
		suffix = "w"
	}
	switch unit {
	case SizeMegawords:
		out, suffix = 2, "w"
	case SizeGigabytes:
		out, suffix = 3, "b"
	}
	n = scale(n, mag, out)
	if suffix == "w" {
		n = (n + 7) >> 3
	}
	for n > 9999 && out < len(sizeUnits)-1 {
		n = (n + 1023) >> 10
		out++
	}
	return strconv.FormatUint(n, 10) + strings.TrimSpace(sizeUnits[out:out+1]) + suffix
}

// torqueSize is Torque's memory column: the request unchanged, or converted
// to megawords (-M) or gigabytes (-G).
func torqueSize(v string, unit SizeUnit) string {
	if unit == SizeNatural {
		return v
	}
	n, mag, words, ok := parseSize(v)
	if !ok {
		return v
	}
	if words {
		n <<= 3
	}
	if unit == SizeMegawords {
		return strconv.FormatUint((scale(n, mag, 2)+7)>>3, 10) + "mw"
	}
	return strconv.FormatUint(scale(n, mag, 3), 10) + "gb"
}

// torqueAltHead is Torque's alternate-format header (reference §5.4).
func torqueAltHead() string {
	return strings.Repeat(" ", 82) + "Req'd       Req'd       Elap\n" +
		"Job ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory      Time    S   Time\n" +
		"----------------------- ----------- -------- ---------------- ------ ----- ------ --------- --------- - ---------\n"
}

// proAltHead is OpenPBS's alternate-format header, normal or wide. With
// est (-T) the last column is the estimated start: a line with "Est" above
// "Req'd  Req'd   Start", over the usual column names.
func proAltHead(wide, est bool) string {
	last, estLine := "Elap", ""
	if est {
		last = "Start"
	}
	if !wide {
		if est {
			estLine = strings.Repeat(" ", 75) + "Est\n"
		}
		return estLine + strings.Repeat(" ", 60) + "Req'd  Req'd   " + last + "\n" +
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time\n" +
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----\n"
	}
	widths := []int{30, 15, 15, 15, 8, 4, 5}
	titles := []string{"Job ID", "Username", "Queue", "Jobname", "SessID", "NDS", "TSK"}
	var sp, hd, da strings.Builder
	for i, n := range widths {
		sp.WriteString(strings.Repeat(" ", n) + " ")
		hd.WriteString(left(titles[i], n) + " ")
		da.WriteString(strings.Repeat("-", n) + " ")
	}
	if est {
		estLine = sp.String() + strings.Repeat(" ", 15) + "Est\n"
	}
	return estLine + sp.String() + "Req'd  Req'd   " + last + "\n" + hd.String() + "Memory Time  S Time\n" + da.String() + "------ ----- - -----\n"
}

// AltJobTable writes the alternate format (-a, and -u, -i, -r, -n, -s,
// -H): a blank line, "<server>: <comment>", the three header lines, then a
// row per job with its node and comment lines as asked. With no jobs it
// writes nothing.
func AltJobTable(w io.Writer, jobs []proto.Status, o Options) error {
	if len(jobs) == 0 {
		return nil
	}
	e := &errWriter{w: w}
	e.print("\n", printable(o.ServerName), ": ", printable(o.ServerComment), "\n")
	if o.torque() {
		e.print(torqueAltHead())
	} else {
		e.print(proAltHead(o.Wide, o.EstStart))
		if o.EstStart {
			jobs = byEstimatedStart(jobs, o.Now)
		}
	}
	for _, j := range jobs {
		e.print(altRow(altJob(j, o), o))
	}
	return e.err
}

func altRow(f altFields, o Options) string {
	var b strings.Builder
	oneLine := o.OneLine && (o.Nodes || (o.Comments && !o.torque()))
	if o.torque() {
		b.WriteString(left(cut(f.id, 22), 23) + " " + leftCut(f.user, 11) + " " + leftCut(f.queue, 8) + " " +
			leftCut(f.name, 16) + " " + rightCut(f.sess, 6) + " " + rightCut(f.nds, 5) + " " + rightCut(f.tsk, 6) + " " +
			rightCut(f.mem, 9) + " " + rightCut(f.reqTime, 9) + " " + leftCut(f.state, 1) + " " + rightCut(f.elap, 9))
		if !oneLine {
			b.WriteString("\n")
		}
		if o.Nodes {
			for _, l := range torqueNodeLines(f.execHost, oneLine) {
				b.WriteString("   " + l + "\n")
			}
		}
		if o.Comments {
			b.WriteString("   " + printable(f.comment) + "\n")
		}
		return b.String()
	}
	if o.Wide {
		b.WriteString(leftCut(mark(f.id, 30), 30) + " " + leftCut(mark(f.user, 15), 15) + " " +
			leftCut(mark(f.queue, 15), 15) + " " + leftCut(mark(f.name, 15), 15) + " " +
			rightCut(mark(f.sess, 8), 8) + " " + rightCut(mark(f.nds, 4), 4) + " " + rightCut(mark(f.tsk, 5), 5) + " " +
			rightCut(f.mem, 6) + " " + rightCut(f.reqTime, 5) + " " + f.state + " " + rightCut(f.elap, 5))
	} else {
		b.WriteString(leftCut(mark(f.id, 15), 15) + " " + leftCut(mark(f.user, 8), 8) + " " +
			leftCut(mark(f.queue, 8), 8) + " " + leftCut(mark(f.name, 10), 10) + " " +
			rightCut(mark(f.sess, 6), 6) + " " + rightCut(mark(f.nds, 3), 3) + " " + rightCut(mark(f.tsk, 3), 3) + " " +
			rightCut(f.mem, 6) + " " + rightCut(f.reqTime, 5) + " " + leftCut(f.state, 1) + " " + rightCut(f.elap, 5))
	}
	if oneLine {
		b.WriteString(" ")
	} else {
		b.WriteString("\n")
	}
	if o.Nodes {
		if oneLine {
			b.WriteString(strings.Join(nodeNames(f.execHost), "+") + "\n")
		} else {
			for _, l := range proNodeLines(f.execHost) {
				b.WriteString("   " + l + "\n")
			}
		}
	}
	if o.Comments {
		b.WriteString("   " + printable(proComment(f.comment, o.Wide)) + "\n")
	}
	return b.String()
}

// mark is star for a value the job has; OpenPBS leaves its placeholder
// alone and lets the column width cut it.
func mark(s string, n int) string {
	if s == blank {
		return s
	}
	return star(s, n)
}

// proComment shortens a comment to the 74 (wide 114) columns OpenPBS
// gives it, ending a cut one with "...".
func proComment(c string, wide bool) string {
	scope, keep := 74, 71
	if wide {
		scope, keep = 114, 111
	}
	if len([]rune(c)) > scope {
		return cut(c, keep) + "..."
	}
	return c
}

// nodeNames splits an exec_host into its chunks with the hosts' domains
// removed ("n1.example.com/0*2" -> "n1/0*2"); an IPv4 address is kept
// whole.
func nodeNames(execHost string) []string {
	if execHost == blank {
		return []string{blank} // no exec_host: PBS prints its placeholder
	}
	var out []string
	for _, tok := range strings.Split(execHost, "+") {
		host, chunk := tok, ""
		if i := strings.IndexByte(tok, '/'); i >= 0 {
			host, chunk = tok[:i], tok[i:]
		}
		if _, err := netip.ParseAddr(host); err != nil {
			if i := strings.IndexByte(host, '.'); i > 0 {
				host = host[:i]
			}
		}
		out = append(out, cell(host+chunk, noText))
	}
	return out
}

// lineLimit is the width node lists are packed into.
const lineLimit = 77

// proNodeLines packs the nodes into lines joined by '+', as OpenPBS does:
// a line that is continued ends with '+'.
func proNodeLines(execHost string) []string {
	var lines []string
	cur := ""
	for _, n := range nodeNames(execHost) {
		if cur != "" && len([]rune(cur))+len([]rune(n)) >= lineLimit {
			lines = append(lines, cur)
			cur = ""
		}
		cur += n + "+"
	}
	if cur != "" {
		lines = append(lines, strings.TrimSuffix(cur, "+"))
	}
	return lines
}

// torqueNodeLines packs the nodes as Torque does: a continuation line
// starts with '+'. With -1 everything stays on one line.
func torqueNodeLines(execHost string, oneLine bool) []string {
	var lines []string
	cur := ""
	for i, n := range nodeNames(execHost) {
		if i > 0 {
			n = "+" + n
		}
		if !oneLine && cur != "" && len([]rune(cur))+len([]rune(n)) >= lineLimit {
			lines = append(lines, cur)
			cur = ""
		}
		cur += n
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
