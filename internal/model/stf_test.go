package model

import "testing"

// A shrink-to-fit job that leaves its nodes without ending forgets the
// walltime its start chose, so that its next start chooses again; other
// jobs keep theirs.
func TestRequeueForgetsChosenWalltime(t *testing.T) {
	t.Parallel()
	for _, back := range []struct {
		name string
		do   func(j *Job)
	}{
		{"requeue", func(j *Job) { j.Requeue("", 100) }},
		{"start taken back", func(j *Job) { j.Unstart("", 100) }},
	} {
		stf := &Job{ResourceList: Resources{}.Set("min_walltime", "00:10:00").Set("walltime", "00:30:00")}
		plain := &Job{ResourceList: Resources{}.Set("walltime", "00:30:00")}
		for _, j := range []*Job{stf, plain} {
			j.Start(SubRunning, 50)
			back.do(j)
		}
		if v, ok := stf.ResourceList.Get("walltime"); ok {
			t.Errorf("%s: the shrink-to-fit job keeps walltime %s", back.name, v)
		}
		if _, ok := stf.ResourceList.Get("min_walltime"); !ok {
			t.Errorf("%s: the shrink-to-fit job lost its min_walltime", back.name)
		}
		if v, _ := plain.ResourceList.Get("walltime"); v != "00:30:00" {
			t.Errorf("%s: the plain job's walltime is %q", back.name, v)
		}
	}
}
