package resc

// Request is a job's resource request (its Resource_List) parsed once:
// the chunks, the placement, and every numeric value as a number. The
// server derives it from the list it stores, a scheduler from the list a
// status reply carries; past that edge nothing reads the text again.
type Request struct {
	// Select is the job's chunks (nil when the list has no select: a job
	// in a route queue, not yet normalised).
	Select Select
	// Place is the placement (zero when the list has none).
	Place Place
	// Totals are what the chunks take from nodes, summed over the select
	// (a chunk naming no ncpus takes one cpu).
	Totals Amounts
	// Numbers holds every numeric value of the list: walltime and cput in
	// seconds, mem in bytes, ncpus, nodect, a site's numeric resources.
	Numbers Amounts
}

// ParseRequest parses a resource list of built-in resources
// (Table.ParseRequest of the built-ins alone).
func ParseRequest(list []Pair) (Request, error) { return (*Table)(nil).ParseRequest(list) }

// ParseRequest parses a resource list of canonical values. A select or
// place that does not parse is an error naming it; other values that are
// not numbers are simply not in Numbers.
func (t *Table) ParseRequest(list []Pair) (Request, error) {
	r := Request{Numbers: make(Amounts, len(list))}
	for _, p := range list {
		switch p.Name {
		case "select":
			sel, err := t.ParseSelect(p.Value)
			if err != nil {
				return Request{}, err
			}
			r.Select = sel
		case "place":
			pl, err := ParsePlace(p.Value)
			if err != nil {
				return Request{}, err
			}
			r.Place = pl
		default:
			if v, ok := t.Number(p.Name, p.Value); ok {
				r.Numbers[p.Name] = v
			}
		}
	}
	r.Totals = r.Select.Amounts()
	return r, nil
}

// Walltime is the requested walltime in seconds, 0 when none was asked for.
func (r Request) Walltime() int64 { return int64(r.Numbers["walltime"]) }
