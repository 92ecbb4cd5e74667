package model

import "unique"

// ShareStrings makes j's strings that many jobs have in common (the
// environment a shell submits with, owner, queue, paths' directories aside,
// resource names and values) the same memory as every other job's equal
// strings, and trims its resource lists to their length. A queue of a
// hundred thousand jobs submitted from one shell then holds one copy of
// their Variable_List, not one per job. Strings are shared through the
// unique package: a value no job uses any more is collected. The server
// calls it on every job it keeps.
func (j *Job) ShareStrings() {
	for _, p := range []*string{&j.Name, &j.Owner, &j.EUser, &j.EGroup, &j.Queue, &j.QueueType, &j.Account,
		&j.Checkpoint, &j.JoinPath, &j.KeepFiles, &j.Holds, &j.MailPoints, &j.MailUsers, &j.ShellPathList,
		&j.VariableList, &j.SubmitArgs, &j.UserList, &j.GroupList, &j.Project, &j.SubmitHost, &j.InitWorkDir,
		&j.Sandbox, &j.Comment} {
		*p = share(*p)
	}
	j.ResourceList = shareResources(j.ResourceList)
	j.Extra = shareResources(j.Extra)
	j.Estimated = shareResources(j.Estimated)
}

func share(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// shareResources returns r at its length (a copy when it has room to
// spare) with shared strings. Sharing in place changes no value.
func shareResources(r Resources) Resources {
	if len(r) == 0 {
		return r
	}
	out := r
	if cap(r) > len(r) {
		out = make(Resources, len(r))
	}
	for i, p := range r {
		out[i].Name, out[i].Value = share(p.Name), share(p.Value)
	}
	return out
}
