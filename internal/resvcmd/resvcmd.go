// Package resvcmd is what the reservation commands (pbs_rsub, pbs_rstat,
// pbs_rdel, pbs_ralter) share: their options read into requests and
// pbs_rstat's listings, as OpenPBS prints them. It is pure: the commands
// pass the time and the environment in.
package resvcmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/internal/rrule"
	"github.com/gopbs/gopbs/proto"
)

// Usage texts (OpenPBS's, without the options gopbs does not have).
const (
	SubUsage = `usage: pbs_rsub [-I seconds] [-m mail_points] [-M mail_list]
                [-N reservation_name] [-U auth_user_list] [-G auth_group_list]
                [-H auth_host_list] [-R start_time] [-E end_time] [-D duration]
                [-r rrule_expression]
                -l resource_list | --hosts host1 [... hostn]

  -R, -E    start and end, [[[[CC]YY]MM]DD]hhmm[.SS] (a time of day that
            has passed is tomorrow's); -D a duration ([[hh:]mm:]ss)
  -l        what to reserve: select=...[,place=...], or plain resources
  -r        a standing reservation: an iCalendar rule such as
            "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10" (COUNT or UNTIL required;
            the time zone is PBS_TZID)
  --hosts   a maintenance reservation of these whole hosts (managers
            only), confirmed at once even over running jobs
  -U, -G    who may submit to its queue (default: you)
  -H        from which hosts (default: any)
  -m, -M    mail points (a b e c, or n) and addresses
  -I secs   wait up to secs for the scheduler's verdict (a reservation
            still unconfirmed then is deleted; negative: left)
`
	StatUsage = `usage: pbs_rstat [-fFBS] [reservation-id...]

  -S  a line per reservation (the default); -f or -F every attribute;
  -B  the ids only
`
	DelUsage = `usage: pbs_rdel reservation-id [reservation-id...]

Deletes reservations (their owner, an operator or a manager): the jobs in
them are deleted, running ones killed, as OpenPBS does.
`
	AlterUsage = `usage: pbs_ralter [-R start_time] [-E end_time] [-D duration]
                  [-U auth_user_list] [-G auth_group_list] [-N name]
                  [-m mail_points] [-M mail_list] reservation-id

A new start or end of a confirmed reservation waits for the scheduler
(BEING_ALTERED): denied, the reservation keeps its times.
`
)

// Submission is a pbs_rsub command line read.
type Submission struct {
	Request proto.ResvSubmitRequest
	// Wait is -I: how long to wait for the verdict (0: do not wait);
	// KeepUnconfirmed is a negative -I (the reservation is left when the
	// wait ends).
	Wait            time.Duration
	KeepUnconfirmed bool
}

// UsageError is a command line the command refuses: it prints the
// message and its usage, and exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// timeAttr reads a -R or -E value into its attribute.
func timeAttr(letter byte, name, v string, now time.Time) (proto.Attr, error) {
	t, err := qsubopt.ParseDateTime(v, now)
	if err != nil {
		return proto.Attr{}, usagef("illegal -%c time value %q: %v", letter, v, err)
	}
	return proto.Attr{Name: name, Value: strconv.FormatInt(t.Unix(), 10)}, nil
}

// common reads the options pbs_rsub and pbs_ralter share.
func common(o getopt.Option, now time.Time, attrs *[]proto.Attr) (bool, error) {
	add := func(name, v string) { *attrs = append(*attrs, proto.Attr{Name: name, Value: v}) }
	switch o.Name {
	case 'R', 'E':
		name := proto.AttrResvStart
		if o.Name == 'E' {
			name = proto.AttrResvEnd
		}
		a, err := timeAttr(o.Name, name, o.Value, now)
		if err != nil {
			return true, err
		}
		*attrs = append(*attrs, a)
	case 'D':
		if strings.TrimSpace(o.Value) == "" {
			return true, usagef("illegal -D value")
		}
		*attrs = append(*attrs, proto.Attr{Name: proto.AttrResourceList, Resource: proto.ResWalltime, Value: o.Value})
	case 'U':
		add(proto.AttrAuthUsers, o.Value)
	case 'G':
		add(proto.AttrAuthGroups, o.Value)
	case 'H':
		add(proto.AttrAuthHosts, o.Value)
	case 'N':
		add(proto.AttrResvName, o.Value)
	case 'm':
		add(proto.AttrMailPoints, strings.TrimSpace(o.Value))
	case 'M':
		add(proto.AttrMailUsers, o.Value)
	default:
		return false, nil
	}
	return true, nil
}

// ParseSubmit reads pbs_rsub's arguments; tz is PBS_TZID.
func ParseSubmit(args []string, now time.Time, tz string) (*Submission, error) {
	opts, operands, err := getopt.Spec{Short: "D:E:H:I:l:m:M:N:r:R:U:G:", Long: []string{"hosts"}}.Parse(args)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	sub := &Submission{}
	attrs := &sub.Request.Attrs
	hosts, standing := false, false
	for _, o := range opts {
		if o.Long == "hosts" {
			hosts = true
			continue
		}
		if done, err := common(o, now, attrs); done {
			if err != nil {
				return nil, err
			}
			continue
		}
		switch o.Name {
		case 'l':
			rl, err := qsubopt.Resources(o.Value)
			if err != nil {
				return nil, usagef("illegal -l value: %v", err)
			}
			*attrs = append(*attrs, rl...)
		case 'r':
			if len(o.Value) > rrule.MaxLen {
				return nil, usagef("illegal -r value (expression too long)")
			}
			standing = true
			*attrs = append(*attrs, proto.Attr{Name: proto.AttrResvRrule, Value: o.Value})
		case 'I':
			n, err := strconv.Atoi(strings.TrimSpace(o.Value))
			if err != nil {
				return nil, usagef("illegal -I time value")
			}
			sub.KeepUnconfirmed = n < 0
			sub.Wait = time.Duration(max(n, -n)) * time.Second
		}
	}
	if hosts {
		if len(operands) == 0 {
			return nil, usagef("missing host(s)")
		}
		for _, a := range *attrs {
			if a.Name == proto.AttrResourceList && (a.Resource == proto.ResSelect || a.Resource == proto.ResPlace) {
				return nil, usagef("can't use -l %s with --hosts", a.Resource)
			}
		}
		sub.Request.Hosts = operands
	} else if len(operands) > 0 {
		return nil, usagef("directive error: %s", strings.Join(operands, " "))
	}
	if standing {
		if tz == "" {
			return nil, &TZError{}
		}
		*attrs = append(*attrs, proto.Attr{Name: proto.AttrResvTimezone, Value: tz})
	}
	return sub, nil
}

// TZError is a standing reservation asked for without PBS_TZID: OpenPBS's
// pbs_rsub refuses it with its own message and exit status 2.
type TZError struct{}

func (*TZError) Error() string {
	return "a valid PBS_TZID timezone environment variable is required."
}

// ParseAlter reads pbs_ralter's arguments: the changes and the id.
func ParseAlter(args []string, now time.Time) (*proto.ResvAlterRequest, error) {
	opts, operands, err := getopt.Spec{Short: "D:E:R:U:G:N:m:M:"}.Parse(args)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if len(operands) != 1 {
		return nil, usagef("name one reservation")
	}
	req := &proto.ResvAlterRequest{ID: strings.TrimSpace(operands[0])}
	for _, o := range opts {
		if _, err := common(o, now, &req.Attrs); err != nil {
			return nil, err
		}
	}
	if len(req.Attrs) == 0 {
		return nil, usagef("nothing to change")
	}
	return req, nil
}

// FullID completes a reservation id without a server part ("R12") with
// the server's name.
func FullID(id, server string) string {
	id = strings.TrimSpace(id)
	if !strings.Contains(id, ".") && server != "" {
		return id + "." + server
	}
	return id
}

// How pbs_rstat lists.
const (
	Short = iota // -S, the default
	Full         // -f, -F
	Brief        // -B
)

// ConvertTime is a time as pbs_rstat's listing shows it: "Today 10:00"
// on the day of now, else "Wed Aug 10 10:00" (in now's zone).
func ConvertTime(unix string, now time.Time) string {
	n, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return unix
	}
	t := time.Unix(n, 0).In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return "Today " + t.Format("15:04")
	}
	return t.Format("Mon Jan 02 15:04")
}

// Header prints pbs_rstat's listing header.
func Header(w io.Writer) {
	fmt.Fprintf(w, "%-10.10s %-8.8s %-8.8s %-5.5s %17.17s / Duration / %-17.17s\n", "Resv ID", "Queue", "User", "State", "Start", "End")
	fmt.Fprintln(w, strings.Repeat("-", 69))
}

// Print lists one reservation as pbs_rstat does (how: Short, Full or
// Brief). Times show in now's zone.
func Print(w io.Writer, st proto.Status, how int, now time.Time) {
	get := func(name string) string { v, _ := st.Get(name); return v }
	switch how {
	case Brief:
		fmt.Fprintf(w, "Resv ID: %s\n", st.Name)
	case Short:
		state := get(proto.AttrResvState)
		if s, ok := proto.ParseResvState(state); ok {
			state = s.Short()
		}
		user, _, _ := strings.Cut(get(proto.AttrResvOwner), "@")
		fmt.Fprintf(w, "%-10.10s %-8.8s %-8.8s %-5.5s ", st.Name, get(proto.AttrQueue), user, state)
		fmt.Fprintf(w, "%17.17s / ", ConvertTime(get(proto.AttrResvStart), now))
		fmt.Fprintf(w, "%s / %-17.17s\n", get(proto.AttrResvDuration), ConvertTime(get(proto.AttrResvEnd), now))
	default:
		fmt.Fprintf(w, "Resv ID: %s\n", st.Name)
		for _, a := range st.Attrs {
			v := a.Value
			switch a.Name {
			case proto.AttrResvOccurrences:
				continue
			case proto.AttrResvState:
				if s, ok := proto.ParseResvState(v); ok {
					v = s.String()
				}
			case proto.AttrResvStart, proto.AttrResvEnd, proto.AttrResvRetry, proto.AttrCtime, proto.AttrMtime:
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					v = time.Unix(n, 0).In(now.Location()).Format("Mon Jan 02 15:04:05 2006")
				}
			}
			fmt.Fprintf(w, "%s = %s\n", a.FullName(), v)
		}
		fmt.Fprintln(w)
	}
}

// PrintState prints what pbs_rsub and pbs_ralter print of a reservation
// they leave: its id and state as OpenPBS's commands say it
// ("R12.srv CONFIRMED").
func PrintState(id string, st proto.ResvState) {
	fmt.Printf("%s %s\n", id, strings.TrimPrefix(st.String(), "RESV_"))
}
