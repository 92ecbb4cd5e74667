package server

import (
	"slices"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// runAs applies whom a job asks to run as (qsub -u, -W group_list) for
// its owner (mu not needed). A job runs as the user who submitted it:
// User_List may name only that user (on any host). group_list names the
// group the job runs with, which must be one of the owner's groups; the
// entry without a host (else the first) becomes the job's egroup.
func runAs(j *model.Job, owner caller) error {
	for _, entry := range model.SplitList(j.UserList) {
		name, _, _ := strings.Cut(entry, "@")
		if name != owner.user {
			return proto.Errorf(proto.PBSE_BADUSER, "(User_List names %s: a job runs as the user who submits it, %s)", name, owner.user)
		}
	}
	chosen, hostless := owner.group, false
	for k, entry := range model.SplitList(j.GroupList) {
		name, host, _ := strings.Cut(entry, "@")
		if name != owner.group && !slices.Contains(owner.groups, name) {
			return proto.Errorf(proto.PBSE_BADGRP, "(group_list names %s, which %s is not a member of)", name, owner.user)
		}
		if k == 0 || host == "" && !hostless {
			chosen, hostless = name, host == ""
		}
	}
	j.EGroup = chosen
	return nil
}
