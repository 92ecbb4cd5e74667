package resvspec

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/rrule"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// OccurrenceCap is the most occurrences a standing reservation may have
// within Horizon (more is refused); OpenPBS counts occurrences only within
// 3 years of the submission.
const (
	OccurrenceCap = 1000
	Horizon       = 3 * 365 * 24 * time.Hour
)

// Request is a pbs_rsub or pbs_ralter request's times and resources,
// read from its attributes (ParseAttrs) and settled (Settle). An
// alteration starts from the reservation's own start and end.
type Request struct {
	Start, End, Duration int64
	StartSet, EndSet     bool
	// Resources are the Resource_List entries but walltime (the
	// duration), as given.
	Resources map[string]string
}

// ParseAttrs reads the attributes of a submission or an alteration into r
// and the times and resources of p; anything else is refused, naming it.
func ParseAttrs(attrs []proto.Attr, r *model.Resv, p *Request) error {
	for _, a := range attrs {
		switch a.Name {
		case proto.AttrResvStart, proto.AttrResvEnd:
			n, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
			if err != nil || n <= 0 {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s = %q)", a.Name, a.Value)
			}
			if a.Name == proto.AttrResvStart {
				p.Start, p.StartSet = n, true
			} else {
				p.End, p.EndSet = n, true
			}
		case proto.AttrResvDuration:
			secs, err := resc.ParseDuration(a.Value)
			if err != nil || secs <= 0 {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s = %q)", a.Name, a.Value)
			}
			p.Duration = secs
		case proto.AttrResourceList:
			if a.Resource == proto.ResMinWalltime || a.Resource == proto.ResMaxWalltime {
				return proto.NewError(proto.PBSE_NOSTF_RESV)
			}
			if a.Resource == proto.ResWalltime {
				secs, err := resc.ParseDuration(a.Value)
				if err != nil || secs <= 0 {
					return proto.Errorf(proto.PBSE_BADTSPEC, "(walltime = %q)", a.Value)
				}
				p.Duration = secs
				continue
			}
			if p.Resources == nil {
				p.Resources = map[string]string{}
			}
			p.Resources[a.Resource] = a.Value
		case proto.AttrResvName:
			if strings.ContainsAny(a.Value, resc.ControlChars) || len(a.Value) > 236 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Reserve_Name = %q)", a.Value)
			}
			r.Name = a.Value
		case proto.AttrAuthUsers, proto.AttrAuthGroups, proto.AttrAuthHosts:
			items := model.SplitList(a.Value)
			if len(items) == 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(%s is empty)", a.Name)
			}
			for _, it := range items {
				if strings.ContainsAny(it, " \t"+resc.ControlChars) {
					return proto.Errorf(proto.PBSE_BADATVAL, "(%s = %q)", a.Name, a.Value)
				}
			}
			switch a.Name {
			case proto.AttrAuthUsers:
				r.AuthUsers = strings.Join(items, ",")
			case proto.AttrAuthGroups:
				r.AuthGroups = strings.Join(items, ",")
			default:
				r.AuthHosts = strings.Join(items, ",")
			}
		case proto.AttrMailPoints:
			if strings.Trim(a.Value, "abecn") != "" || strings.Contains(a.Value, "n") && a.Value != "n" {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Mail_Points = %q: a, b, e, c or n)", a.Value)
			}
			r.MailPoints = a.Value
		case proto.AttrMailUsers:
			v, err := mailer.ParseUsers(a.Value)
			if err != nil {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Mail_Users: %v)", err)
			}
			r.MailUsers = v
		case proto.AttrResvRrule:
			r.Rrule = a.Value
		case proto.AttrResvTimezone:
			r.TZ = a.Value
		case proto.AttrResvStanding, proto.AttrVariableList:
			// Implied by reserve_rrule; the environment is not kept.
		default:
			return proto.Errorf(proto.PBSE_NOATTR, "%s (not a reservation attribute)", a.FullName())
		}
	}
	return nil
}

// Settle settles start, end and duration: the end is given or the
// start plus the duration; a start in the past, an end at or before the
// start, or an end and a duration that disagree are refused.
func (p *Request) Settle(now int64) error {
	if !p.StartSet {
		switch {
		case p.EndSet && p.Duration > 0:
			p.Start = p.End - p.Duration
		default:
			p.Start = now
		}
	}
	switch {
	case p.EndSet && p.Duration > 0 && p.End-p.Start != p.Duration:
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the end and the duration disagree)")
	case !p.EndSet && p.Duration <= 0:
		return proto.Errorf(proto.PBSE_BADTSPEC, "(give an end (-E) or a duration (-D))")
	case !p.EndSet:
		p.End = p.Start + p.Duration
	}
	if p.Start < now {
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the start %s is in the past)", time.Unix(p.Start, 0).Format(time.DateTime))
	}
	if p.End <= p.Start {
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the end %s is not after the start %s)", time.Unix(p.End, 0).Format(time.DateTime), time.Unix(p.Start, 0).Format(time.DateTime))
	}
	p.Duration = p.End - p.Start
	return nil
}

// rruleCodes maps a frequency to OpenPBS's code for an occurrence longer
// than its period.
var rruleCodes = map[rrule.Freq]proto.Code{
	rrule.Yearly: proto.PBSE_BAD_RRULE_YEARLY, rrule.Monthly: proto.PBSE_BAD_RRULE_MONTHLY,
	rrule.Weekly: proto.PBSE_BAD_RRULE_WEEKLY, rrule.Daily: proto.PBSE_BAD_RRULE_DAILY,
	rrule.Hourly: proto.PBSE_BAD_RRULE_HOURLY, rrule.Minutely: proto.PBSE_BAD_RRULE_MINUTELY,
	rrule.Secondly: proto.PBSE_BAD_RRULE_SECONDLY,
}

// Occurrences lists a reservation's occurrences from start: one for an
// advance reservation; a standing one's from its rule in its time zone.
func Occurrences(r *model.Resv, start, duration, now int64) ([]model.ResvOcc, error) {
	if r.Rrule == "" {
		return []model.ResvOcc{{Start: start}}, nil
	}
	if r.TZ == "" {
		return nil, proto.Errorf(proto.PBSE_BAD_ICAL_TZ, "(a standing reservation needs its time zone: set PBS_TZID)")
	}
	loc, err := time.LoadLocation(r.TZ)
	if err != nil || strings.HasPrefix(r.TZ, "/") || strings.Contains(r.TZ, "..") {
		return nil, proto.Errorf(proto.PBSE_BAD_ICAL_TZ, "(%q)", r.TZ)
	}
	rule, err := rrule.Parse(r.Rrule)
	switch {
	case errors.Is(err, rrule.ErrNoEnd):
		return nil, proto.NewError(proto.PBSE_BAD_RRULE_SYNTAX2)
	case err != nil:
		return nil, proto.Errorf(proto.PBSE_BAD_RRULE_SYNTAX, "(%v)", strings.TrimPrefix(err.Error(), rrule.ErrSyntax.Error()+": "))
	}
	if time.Duration(duration)*time.Second > rule.Freq.MaxDuration() {
		return nil, proto.NewError(rruleCodes[rule.Freq])
	}
	times, err := rule.Occurrences(time.Unix(start, 0).In(loc), time.Unix(now, 0).Add(Horizon), OccurrenceCap)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BAD_RRULE_SYNTAX, "(more than %d occurrences within 3 years)", OccurrenceCap)
	}
	out := make([]model.ResvOcc, len(times))
	for i, t := range times {
		out[i].Start = t.Unix()
		if i > 0 && out[i].Start-out[i-1].Start < duration {
			return nil, proto.Errorf(proto.PBSE_BADTSPEC, "(occurrences %d and %d overlap: the duration is longer than the time between them)", i, i+1)
		}
	}
	return out, nil
}

// Select works out a reservation's select and place from its
// Resource_List: select as given, else one chunk of the resources named
// (ncpus=1 when none).
func Select(rt *resc.Table, rl map[string]string) (resc.Select, resc.Place, map[string]string, error) {
	sel, place := rl[proto.ResSelect], rl[proto.ResPlace]
	rest := map[string]string{}
	var chunk []string
	for k, v := range rl {
		if k == proto.ResSelect || k == proto.ResPlace {
			continue
		}
		c, err := rt.Canonical(k, v)
		if err != nil {
			return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.%s: %v)", k, err)
		}
		if rt.Consumable(k) && k != proto.ResNodect {
			chunk = append(chunk, k+"="+c)
		}
	}
	if sel == "" {
		sort.Strings(chunk)
		if len(chunk) == 0 {
			chunk = []string{"ncpus=1"}
		}
		sel = "1:" + strings.Join(chunk, ":")
	} else if len(chunk) > 0 {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_INVALJOBRESC, " %s (give a select or plain resources, not both)", strings.Join(chunk, ","))
	}
	s, err := rt.ParseSelect(sel)
	if err != nil {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.select = %q: %v)", sel, err)
	}
	if s.Elastic() >= 0 {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(a reservation's select has fixed chunk counts)")
	}
	if place == "" {
		place = "free"
	}
	pl, err := resc.ParsePlace(place)
	if err != nil {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.place = %q: %v)", place, err)
	}
	for k, v := range s.Totals() {
		rest[k] = v
	}
	rest[proto.ResNodect] = strconv.Itoa(s.NodeCount())
	return s, pl, rest, nil
}

// Amounts sums an exec_vnode-like string's amounts per node.
func Amounts(rt *resc.Table, spec string) (map[string]map[string]float64, error) {
	parts, err := place.ParseExecVnode(rt, spec)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, p := range parts {
		m := out[p.Node]
		if m == nil {
			m = map[string]float64{}
			out[p.Node] = m
		}
		for k, v := range p.Amounts {
			m[k] += v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node")
	}
	return out, nil
}
