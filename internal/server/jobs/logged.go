package jobs

import (
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/proto"
)

// LoggedStatus is what qstat -x shows of a finished job whose history
// left the server's memory, made from its E record (body, written at
// end): its owner, queue, times, where it ran, what it asked for and
// used, its exit status. What the record does not keep (the script's
// paths, the submit host) is not shown. user is the record's, for the
// caller's right to see it.
func LoggedStatus(id string, end time.Time, body []byte) (st proto.Status, user string, err error) {
	st.Name = id
	add := func(name, res, v string) {
		st.Attrs = append(st.Attrs, proto.Attr{Name: name, Resource: res, Value: v})
	}
	var scratch []byte
	var res []proto.Attr
	err = accounting.EachKV(body, &scratch, func(k, v []byte) error {
		key, val := string(k), string(v)
		switch {
		case key == "user":
			user = val
		case key == "jobname":
			add(proto.AttrJobName, "", val)
		case key == "queue":
			add(proto.AttrQueue, "", val)
		case key == "group":
			add(proto.AttrEgroup, "", val)
		case key == "account":
			add(proto.AttrAccountName, "", val)
		case key == "project":
			add(proto.AttrProject, "", val)
		case key == proto.AttrCtime, key == proto.AttrQtime, key == proto.AttrEtime:
			add(key, "", val)
		case key == "start":
			add(proto.AttrStime, "", val)
		case key == proto.AttrExecHost, key == proto.AttrExecVnode, key == proto.AttrExitStatus, key == proto.AttrRunCount:
			add(key, "", val)
		case key == "session":
			add(proto.AttrSessionID, "", val)
		case strings.HasPrefix(key, proto.AttrResourceList+"."), strings.HasPrefix(key, proto.AttrResourcesUsed+"."):
			name, r, _ := strings.Cut(key, ".")
			res = append(res, proto.Attr{Name: name, Resource: r, Value: val})
		}
		return nil
	})
	if err != nil {
		return proto.Status{}, "", err
	}
	head := []proto.Attr{{Name: proto.AttrJobName}, {Name: proto.AttrJobOwner, Value: user}, {Name: proto.AttrJobState, Value: "F"}}
	for _, a := range st.Attrs {
		if a.Name == proto.AttrJobName {
			head[0].Value = a.Value
		}
	}
	rest := []proto.Attr{{Name: proto.AttrEuser, Value: user}, {Name: proto.AttrMtime, Value: strconv.FormatInt(end.Unix(), 10)},
		{Name: proto.AttrComment, Value: "Job finished; shown from its accounting record of " + end.Format("01/02/2006")}}
	for _, a := range st.Attrs {
		if a.Name != proto.AttrJobName {
			rest = append(rest, a)
		}
	}
	st.Attrs = append(append(head, rest...), res...)
	return st, user, nil
}
